"""Delete every file older than N days (30 by default), oldest first, deleting while iterating.

    FILESHARE_BASE_URL=... FILESHARE_API_KEY=... python3 examples/cleanup_old_files.py [--days N] [--dry-run]

``files.iterate(order="asc")`` goes oldest first and asks each page by the ``next_before_id`` of
the one before (files newer than the last one seen), so deleting the files it yields shifts
nothing: no file is skipped. The first file young enough ends the walk: the rest are newer.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone

import fileshare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    options = parser.parse_args()
    cutoff = datetime.now(timezone.utc) - timedelta(days=options.days)

    with fileshare.Client() as client:  # FILESHARE_BASE_URL and FILESHARE_API_KEY
        deleted = freed = 0
        for file in client.files.iterate(order="asc", limit=100):
            if file.uploaded_at >= cutoff:
                break  # oldest first: every file after it is newer
            if not options.dry_run:
                client.files.delete(file.file_id)
            deleted += 1
            freed += file.size
        kept = client.files.list(limit=1).pagination.total - (deleted if options.dry_run else 0)
        verb = "would delete" if options.dry_run else "deleted"
        print(f"{verb} {deleted} files older than {options.days} days ({freed} bytes); kept {kept}")
        usage = client.stats()
        print(f"now {usage.stats.total_size} bytes used, {usage.stats.storage_reserved} reserved by uploads in progress")


if __name__ == "__main__":
    main()
