"""Everything ``files.upload()`` accepts, behind one interface that reads it in slices."""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import IO, Any, Union

from ._common import READ_SIZE, open_for_read
from ._errors import ConfigurationError

UploadInput = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes], Iterable[bytes], AsyncIterable[bytes]]
"""A path; bytes; a binary file object (``open(path, "rb")``, ``io.BytesIO``, a socket file, ...); an
iterable of bytes (a generator); with ``AsyncClient`` also an async iterable of bytes."""


def _to_bytes(chunk: object) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, (bytearray, memoryview)):
        return bytes(chunk)
    if isinstance(chunk, str):
        raise ConfigurationError("the upload source gave text, not bytes: open files in binary mode ('rb')")
    raise ConfigurationError(f"the upload source gave {type(chunk).__name__}, not bytes")


class UploadSource:
    """A normalized upload source. ``size`` may be None (a stream of unknown length)."""

    size: int | None
    name: str | None
    replayable: bool
    """True when the bytes can be read again (path, bytes, seekable file): a failed upload may be resent."""

    def __init__(self, kind: str, value: Any, size: int | None, name: str | None, replayable: bool, start: int = 0) -> None:
        self._kind = kind
        self._value = value
        self._start = start
        self._used = False
        self.size = size
        self.name = name
        self.replayable = replayable

    def _claim(self) -> None:
        if not self.replayable:
            if self._used:
                raise ConfigurationError("a stream source can be read only once")
            self._used = True

    def iter_chunks(self) -> Iterator[bytes]:
        """The bytes from the start, in slices of at most 1 MiB (blocking reads)."""
        self._claim()
        kind, value = self._kind, self._value
        if kind == "bytes":
            yield from _slices(value)
        elif kind == "path":
            with open(value, "rb") as file:
                while chunk := file.read(READ_SIZE):
                    yield chunk
        elif kind == "file":
            if self.replayable:
                value.seek(self._start)
            while True:
                chunk = value.read(READ_SIZE)
                if inspect.isawaitable(chunk):
                    raise ConfigurationError("an async file object needs fileshare.AsyncClient")
                if not chunk:
                    break
                yield _to_bytes(chunk)
        elif kind == "iterable":
            for chunk in value:
                if chunk:
                    yield _to_bytes(chunk)
        else:
            raise ConfigurationError("an async iterable source needs fileshare.AsyncClient")

    async def aiter_chunks(self) -> AsyncIterator[bytes]:
        """The same, for the event loop: file reads run in a worker thread."""
        self._claim()
        kind, value = self._kind, self._value
        if kind == "bytes":
            for piece in _slices(value):
                yield piece
        elif kind == "path":
            file = await asyncio.to_thread(open_for_read, value)
            try:
                while chunk := await asyncio.to_thread(file.read, READ_SIZE):
                    yield chunk
            finally:
                await asyncio.to_thread(file.close)
        elif kind == "file":
            if self.replayable:
                await asyncio.to_thread(value.seek, self._start)
            is_async = inspect.iscoroutinefunction(value.read)
            while True:
                chunk = await value.read(READ_SIZE) if is_async else await asyncio.to_thread(value.read, READ_SIZE)
                if not chunk:
                    break
                yield _to_bytes(chunk)
        elif kind == "async_iterable":
            async for chunk in value:
                if chunk:
                    yield _to_bytes(chunk)
        else:
            for chunk in value:
                if chunk:
                    yield _to_bytes(chunk)


def _slices(data: bytes) -> Iterator[bytes]:
    """`data` in slices of at most READ_SIZE bytes."""
    view = memoryview(data)
    for at in range(0, len(view), READ_SIZE):
        yield bytes(view[at : at + READ_SIZE])


def _file_name(obj: object) -> str | None:
    name = getattr(obj, "name", None)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if isinstance(name, str) and name and not name.startswith("<"):
        return os.path.basename(name) or None
    return None


def to_upload_source(source: UploadInput, size: int | None = None) -> UploadSource:
    """Normalizes an upload input. ``size`` states the length of a stream that does not know it."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not isinstance(path, str):
            path = os.fsdecode(path)
        try:
            length = os.stat(path).st_size
        except OSError as error:
            raise ConfigurationError(f"cannot read the upload source {path!r}: {error.strerror}") from error
        if os.path.isdir(path):
            raise ConfigurationError(f"the upload source {path!r} is a directory")
        return UploadSource("path", path, length, os.path.basename(path) or None, True)
    if isinstance(source, (bytes, bytearray, memoryview)):
        view = memoryview(source).cast("B")
        return UploadSource("bytes", view, len(view), None, True)
    if hasattr(source, "read"):
        obj: Any = source
        mode = getattr(obj, "mode", "b")
        if isinstance(mode, str) and "b" not in mode:
            raise ConfigurationError("open the file in binary mode ('rb'), not text mode")
        if not inspect.iscoroutinefunction(obj.read):
            try:
                if obj.seekable():
                    start = obj.tell()
                    end = obj.seek(0, os.SEEK_END)
                    obj.seek(start)
                    return UploadSource("file", obj, end - start, _file_name(obj), True, start)
            except (AttributeError, OSError, ValueError):
                pass
        return UploadSource("file", obj, size, _file_name(obj), False)
    if isinstance(source, AsyncIterable):
        return UploadSource("async_iterable", source, size, None, False)
    if isinstance(source, Iterable) and not isinstance(source, str):
        return UploadSource("iterable", source, size, None, False)
    raise ConfigurationError(
        f"unsupported upload source {type(source).__name__}: pass a path, bytes, a binary file object or an iterable of bytes"
    )
