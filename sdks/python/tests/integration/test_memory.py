"""Uploads from a path stream in constant memory: the peak RSS of a fresh process barely grows."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MiB = 1024 * 1024
SCRIPT = Path(__file__).resolve().parents[1] / "measure_upload.py"


def zeros_sha256(size: int) -> str:
    digest = hashlib.sha256()
    block = bytes(MiB)
    for _ in range(size // MiB):
        digest.update(block)
    return digest.hexdigest()


def measure(server: dict[str, Any], size: int, flavour: str, mode: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    out = subprocess.run(
        [sys.executable, str(SCRIPT), server["base_url"], server["keys"]["pro"], str(size), flavour, mode],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    print(f"{size // MiB} MiB {flavour} {mode}: RSS grew {result['growth'] / MiB:.1f} MiB "
          f"(peak {result['peak_rss'] / MiB:.1f} MiB) in {result['seconds']} s")
    assert result["size"] == size and result["progress"] == size
    assert result["sha256"] == zeros_sha256(size)
    return result


@pytest.mark.parametrize("flavour, mode", [("sync", "multipart"), ("async", "resumable")])
def test_200_mib_upload_keeps_memory_flat(server: dict[str, Any], flavour: str, mode: str) -> None:
    assert measure(server, 200 * MiB, flavour, mode)["growth"] < 64 * MiB


@pytest.mark.slow
@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("mode", ["multipart", "resumable"])
def test_1_gib_upload_keeps_memory_flat(server: dict[str, Any], flavour: str, mode: str) -> None:
    assert measure(server, 1024 * MiB, flavour, mode)["growth"] < 64 * MiB
