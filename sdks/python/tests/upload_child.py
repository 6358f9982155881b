"""A process of its own for the cross-process resume test.

    upload_child.py start PATH URL_FILE    # a sync upload that records its upload URL, then stalls midway
    upload_child.py continue PATH URL      # an AsyncClient continuing that upload; prints the record

FILESHARE_BASE_URL and FILESHARE_API_KEY name the server and the key.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import fileshare

CHUNK = 1024 * 1024


def start(path: str, url_file: str) -> None:
    size = os.path.getsize(path)

    def created(url: str) -> None:
        with open(url_file + ".tmp", "w") as out:
            out.write(url)
        os.replace(url_file + ".tmp", url_file)

    def progress(sent: int, total: int | None) -> None:
        if sent >= size // 2:
            print(f"midway {sent}", flush=True)
            time.sleep(120)  # stalls inside a chunk's request until the test kills the process

    with fileshare.Client() as client:
        client.files.upload(path, resumable=True, chunk_size=CHUNK, on_upload_created=created, on_progress=progress)
    print("finished: the test should have killed this process", flush=True)


async def resume(path: str, url: str) -> None:
    offsets: list[int] = []
    async with fileshare.AsyncClient() as client:
        file = await client.files.upload(path, upload_url=url, chunk_size=CHUNK, on_progress=lambda sent, total: offsets.append(sent))
    print(json.dumps({"file": file.to_dict(), "first_offset": offsets[0] if offsets else None}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "start":
        start(sys.argv[2], sys.argv[3])
    else:
        asyncio.run(resume(sys.argv[2], sys.argv[3]))
