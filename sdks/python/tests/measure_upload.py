"""Uploads a sparse file of SIZE bytes from a path and prints the peak RSS growth of this process
as JSON. Run in a fresh process by tests/integration/test_memory.py (and by hand:
``python3 tests/measure_upload.py BASE_URL KEY SIZE sync|async multipart|resumable``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time

import fileshare


def status(field: str) -> int:
    with open("/proc/self/status") as file:
        for line in file:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def main() -> None:
    base_url, key, size, flavour, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    resumable = mode == "resumable"
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "big.bin")
        with open(path, "wb") as file:
            file.truncate(size)  # sparse: no disk used, reads give zeros
        last = [0]

        def progress(sent: int, total: int | None) -> None:
            last[0] = sent

        if flavour == "sync":
            client = fileshare.Client(base_url, key)
            client.stats()  # warm up: imports, connection pool
        else:
            aclient = fileshare.AsyncClient(base_url, key)
            loop = asyncio.new_event_loop()
            loop.run_until_complete(aclient.stats())
        try:
            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")  # resets VmHWM (the peak) to the current RSS
        except OSError:
            pass
        baseline = status("VmRSS")
        started = time.monotonic()
        if flavour == "sync":
            record = client.files.upload(path, resumable=resumable, on_progress=progress)
            client.files.delete(record.file_id)
            client.close()
        else:
            record = loop.run_until_complete(aclient.files.upload(path, resumable=resumable, on_progress=progress))
            loop.run_until_complete(aclient.files.delete(record.file_id))
            loop.run_until_complete(aclient.close())
        seconds = time.monotonic() - started
        print(
            json.dumps(
                {
                    "size": record.size,
                    "sha256": record.sha256,
                    "progress": last[0],
                    "baseline_rss": baseline,
                    "peak_rss": status("VmHWM"),
                    "growth": status("VmHWM") - baseline,
                    "seconds": round(seconds, 2),
                }
            )
        )


if __name__ == "__main__":
    main()
