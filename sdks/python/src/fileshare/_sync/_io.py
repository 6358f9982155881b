"""Blocking work for the sync client: done in place."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Hasher(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...


def run(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return fn(*args, **kwargs)


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def next_chunk(iterator: Iterator[bytes]) -> bytes | None:
    return next(iterator, None)


def close_iterator(iterator: Iterator[bytes]) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def update_hash(hasher: Hasher, data: bytes | memoryview) -> None:
    hasher.update(data)
