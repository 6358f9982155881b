"""A large upload through resumable uploads (tus), in 8 MiB chunks, with a progress bar.

A dropped connection is resumed where the server stands, within max_retries failures in a row.
The upload's URL is written next to the file as soon as the upload exists: if this process dies
(Ctrl-C, a crash, a reboot), running it again with the same PATH continues that upload instead of
starting over.

    FILESHARE_BASE_URL=... FILESHARE_API_KEY=... python3 examples/resumable_upload.py [PATH]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import fileshare


def bar(sent: int, total: int | None) -> None:
    if total:
        print(f"\r[{'#' * (40 * sent // total):<40}] {100 * sent // total:3d}%", end="", flush=True)


def main() -> None:
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
    else:
        path = Path(tempfile.mkdtemp()) / "twenty-mib.bin"
        with open(path, "wb") as handle:
            handle.truncate(20 * 1024 * 1024)
    with fileshare.Client(max_retries=5, chunk_size=8 * 1024 * 1024) as client:
        if not client.resumable_uploads().available:
            sys.exit("this server does not offer resumable uploads")
        state = path.with_name(path.name + ".upload-url")
        upload_url = state.read_text() if state.exists() else None
        if upload_url:
            print(f"continuing {upload_url}")
        file = client.files.upload(
            path, resumable=True, on_progress=bar, upload_url=upload_url, on_upload_created=state.write_text
        )
        state.unlink()
        print(f"\nstored #{file.file_id}, SHA-256 {file.sha256} (checked against the bytes sent)")
        client.files.delete(file.file_id)


if __name__ == "__main__":
    main()
