"""Upload a file at most once, even when the script is run again after a crash or a lost answer.

    FILESHARE_BASE_URL=... FILESHARE_API_KEY=... python3 examples/upload_once.py [PATH]

Every upload carries an idempotency key: the SDK makes one per call, so its own retries never
store a file twice. Passing a key of your own, derived from what you upload, extends that across
calls and processes for 24 hours: a second run gets the first run's file back (the answer is
replayed, nothing is stored or counted again), or continues its resumable upload where it stands.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
import time
from pathlib import Path

import fileshare


def key_for(path: Path) -> str:
    """The same file (name and bytes) gives the same key: printable ASCII, at most 255 characters."""
    digest = hashlib.sha256(path.name.encode("utf-8") + b"\0")
    with open(path, "rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return "upload-once-" + digest.hexdigest()


def main() -> None:
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
    else:
        path = Path(tempfile.mkdtemp()) / "nightly-report.txt"
        path.write_text(f"report of {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    key = key_for(path)

    with fileshare.Client() as client:  # FILESHARE_BASE_URL and FILESHARE_API_KEY
        file = client.files.upload(path, idempotency_key=key)
        print(f"#{file.file_id} {file.filename} ({file.size} bytes), key {key}")
        # What a second run (or a retry after a crash) does: the same key, the same file back.
        again = client.files.upload(path, idempotency_key=key)
        print(f"uploaded again with the same key: #{again.file_id}, {'the same file' if again == file else 'ANOTHER file?'}")
        try:
            path.write_bytes(path.read_bytes() + b"changed\n")
            client.files.upload(path, idempotency_key=key)
        except fileshare.BadRequestError as error:
            print(f"other bytes with the same key: {error.status} {error.code}")


if __name__ == "__main__":
    main()
