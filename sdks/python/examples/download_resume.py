"""Download a public link; run it again after an interruption and it continues where it stopped
(Range + If-Range), then checks the whole file against the ETag (its SHA-256).

    python3 examples/download_resume.py PUBLIC_LINK DESTINATION
    (without arguments: uploads a file, half-downloads it, and resumes)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import fileshare


def main() -> None:
    with fileshare.Client() as client:
        if len(sys.argv) == 3:
            link, destination = sys.argv[1], Path(sys.argv[2])
        else:
            data = os.urandom(3 * 1024 * 1024)
            file = client.files.upload(data, filename="resume-me.bin")
            link, destination = file.public_link, Path(tempfile.mkdtemp()) / "resume-me.bin"
            destination.write_bytes(data[: len(data) // 2])  # as if an earlier download had stopped half-way
        try:
            result = client.download(link, destination, on_progress=lambda done, total: None)
        except fileshare.IntegrityError:
            # The partial file was not this file's beginning: start over.
            result = client.download(link, destination, resume=False)
        print(f"{destination}: {result.size} bytes (kept {result.resumed_from}), SHA-256 {result.sha256}")


if __name__ == "__main__":
    main()
