"""Blocking work for the async client: file I/O runs in a worker thread, waits on the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Hasher(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...


async def run(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await asyncio.to_thread(fn, *args, **kwargs)


async def sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def next_chunk(iterator: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return None


async def close_iterator(iterator: AsyncIterator[bytes]) -> None:
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()


HASH_INLINE = 256 * 1024
"""Smaller pieces are hashed on the event loop; larger ones in a worker thread (hashlib lets go of
the GIL), so that a 16 MiB chunk's SHA-256 does not stall every other task of the loop."""


async def update_hash(hasher: Hasher, data: bytes | memoryview) -> None:
    if len(data) < HASH_INLINE:
        hasher.update(data)
    else:
        await asyncio.to_thread(hasher.update, data)
