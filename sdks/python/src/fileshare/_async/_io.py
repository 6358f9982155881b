"""Blocking work for the async client: file I/O runs in a worker thread, waits on the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


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
