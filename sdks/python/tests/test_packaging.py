"""Installable from this repository: the README's "From source" steps, offline, with Debian's
python3-venv, python3-pip, python3-setuptools and python3-wheel: a wheel built without build
isolation, installed into a fresh virtual environment, imported from outside the source tree. One
version source: the wheel, the user agent and CHANGELOG.md agree with src/fileshare/_version.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import fileshare

ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")


def run(*command: str | Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_NO_INDEX="1")
    out = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, f"{' '.join(map(str, command))}:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_the_version_has_one_source() -> None:
    source = (ROOT / "src" / "fileshare" / "_version.py").read_text()
    assert re.search(r'^__version__ = "(\d+\.\d+\.\d+)"$', source, re.M)
    assert fileshare.__version__ in source
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fileshare._version.__version__"}
    from fileshare._version import USER_AGENT

    assert USER_AGENT == f"fileshare-sdk-python/{fileshare.__version__}"
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    released = [h for h in headings if h != "Unreleased"]
    assert released and released[0] == fileshare.__version__  # the newest release; Unreleased may come first
    assert headings.count("Unreleased") <= 1 and headings.index(released[0]) <= 1
    assert f"fileshare-sdk-python/{fileshare.__version__}" in (ROOT / "README.md").read_text()


def test_a_built_wheel_installs_into_a_fresh_venv(tmp_path: Path) -> None:
    # A copy of the SDK, so that the build writes nothing into the checkout.
    sdk = tmp_path / "sdk"
    shutil.copytree(ROOT, sdk, ignore=shutil.ignore_patterns("tests", "build", "dist", "*.egg-info", "__pycache__", ".*"))
    run(PYTHON, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", tmp_path / "wheels", sdk, cwd=tmp_path)
    wheels = list((tmp_path / "wheels").glob("*.whl"))
    assert [w.name for w in wheels] == [f"fileshare_sdk-{fileshare.__version__}-py3-none-any.whl"]

    venv = tmp_path / "venv"
    run(PYTHON, "-m", "venv", "--system-site-packages", venv, cwd=tmp_path)  # httpx: Debian's python3-httpx
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", wheels[0], cwd=tmp_path)
    probe = """
import json, importlib.metadata as m, pathlib, fileshare
meta = m.metadata("fileshare-sdk")
package = pathlib.Path(fileshare.__file__).parent
print(json.dumps({
    "file": fileshare.__file__,
    "version": fileshare.__version__,
    "metadata_version": meta["Version"],
    "urls": meta.get_all("Project-URL"),
    "requires": meta.get_all("Requires-Dist"),
    "typed": (package / "py.typed").exists(),
    "modules": sorted(p.name for p in (package / "_sync").glob("*.py")),
    "client": repr(fileshare.Client(base_url="https://files.example.com/api/v1", api_key="fsk_x")),
}))
"""
    found = json.loads(run(python, "-c", probe, cwd=tmp_path))
    assert found["file"].startswith(str(venv)), found["file"]
    assert found["version"] == found["metadata_version"] == fileshare.__version__
    assert any(u.startswith("Repository, ") for u in found["urls"]) and any(u.startswith("Changelog, ") for u in found["urls"])
    assert found["requires"] and found["requires"][0].startswith("httpx")
    assert found["typed"] and "_client.py" in found["modules"] and "_files.py" in found["modules"]
    assert "fsk_x" not in found["client"]
    assert sys.version_info >= (3, 11)
