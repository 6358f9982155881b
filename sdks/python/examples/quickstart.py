"""Upload a file, list the account's files, download it back, delete it.

    FILESHARE_BASE_URL=https://files.example.com/api/v1 FILESHARE_API_KEY=fsk_... python3 examples/quickstart.py [PATH]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import fileshare


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else folder / "hello.txt"
    if len(sys.argv) == 1:
        source.write_text("Hello from the Fileshare Python SDK\n")

    with fileshare.Client() as client:  # FILESHARE_BASE_URL and FILESHARE_API_KEY
        file = client.files.upload(source, on_progress=lambda sent, total: print(f"\rsent {sent} of {total} bytes", end=""))
        print(f"\nuploaded #{file.file_id} {file.filename} ({file.size} bytes) at {file.uploaded_at.isoformat()}")
        print(f"public link: {file.public_link}")

        for each in client.files.iterate(limit=100):
            print(f"  #{each.file_id:<6} {each.size:>12} {each.filename}")

        result = client.download(file, folder / f"copy-of-{file.filename}")
        print(f"downloaded {result.size} bytes, SHA-256 {result.sha256}")

        stats = client.stats()
        print(f"{stats.stats.total_files} files, {stats.stats.uploads_today}/{stats.limits.daily_uploads} uploads today, plan {stats.plan}")
        quota = "unlimited" if stats.limits.max_storage is None else f"{stats.limits.max_storage} bytes"
        print(f"storage: {stats.stats.total_size} bytes used, {stats.stats.storage_reserved} reserved, quota {quota}")
        client.files.delete(file.file_id)


if __name__ == "__main__":
    main()
