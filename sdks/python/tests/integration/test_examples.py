"""The examples run as they are, against the real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples").glob("*.py")))
def test_example_runs(server: dict[str, Any], name: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "FILESHARE_BASE_URL": server["base_url"],
        "FILESHARE_API_KEY": server["keys"]["pro"],
    }
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
