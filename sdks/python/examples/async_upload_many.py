"""Upload several files at once with fileshare.AsyncClient, then list them.

    FILESHARE_BASE_URL=... FILESHARE_API_KEY=... python3 examples/async_upload_many.py [PATH ...]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import fileshare


async def main(paths: list[Path]) -> None:
    async with fileshare.AsyncClient(max_retries=3) as client:
        files = await asyncio.gather(*(client.files.upload(path) for path in paths))
        for file in files:
            print(f"#{file.file_id} {file.filename}: {file.public_link}")
        page = await client.files.list(page=1, limit=10)
        print(f"{page.pagination.total} files in the account")
        async for file in client.files.iterate(limit=50):
            if file.file_id in {f.file_id for f in files}:
                await client.files.delete(file.file_id)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        targets = [Path(p) for p in sys.argv[1:]]
    else:
        folder = Path(tempfile.mkdtemp())
        targets = []
        for number in range(3):
            target = folder / f"note-{number}.txt"
            target.write_text(f"note {number}\n")
            targets.append(target)
    asyncio.run(main(targets))
