"""The client and its calls. Written once here; scripts/unasync.py derives the blocking twin in _sync/."""

from __future__ import annotations

import base64
import hashlib
import itertools
import os
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import IO, Any, TypeVar, Union

import httpx

from .. import _common as c
from .._errors import (
    APIConnectionError,
    BadRequestError,
    ConfigurationError,
    FileshareError,
    IntegrityError,
    ServerError,
    error_from_response,
)
from .._records import DownloadResult, FileList, FileRecord, StatsResult
from .._source import UploadInput, UploadSource, to_upload_source
from . import _io

T = TypeVar("T")

FileOrLink = Union[FileRecord, Mapping[str, Any], str]
"""A file record (its ``public_link``, ``sha256`` and ``size`` are used) or a public link."""
Destination = Union[str, "os.PathLike[str]", IO[bytes]]
"""Where a download goes: a path, or a binary file object opened for writing."""


class AsyncClient:
    """The Fileshare API client. Use it as a context manager, or call ``close()``.

    ``base_url`` (ends in ``/api/v1``) and ``api_key`` default to ``FILESHARE_BASE_URL`` and
    ``FILESHARE_API_KEY``. ``timeout`` (seconds) bounds connecting and every stretch without a byte
    sent or received, never a whole transfer. The key never shows in ``repr`` or messages.
    """

    files: AsyncFiles
    """Upload, list, iterate, get, delete."""
    base_url: str
    max_retries: int
    timeout: float | None
    resumable_threshold: int
    chunk_size: int

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        max_retries: int = c.DEFAULT_MAX_RETRIES,
        timeout: float | None = c.DEFAULT_TIMEOUT,
        resumable_threshold: int = c.DEFAULT_RESUMABLE_THRESHOLD,
        chunk_size: int = c.DEFAULT_CHUNK_SIZE,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        config, key = c.resolve_config(base_url, api_key, max_retries, timeout, resumable_threshold, chunk_size)
        self.base_url = config.base_url
        self.max_retries = config.max_retries
        self.timeout = config.timeout
        self.resumable_threshold = config.resumable_threshold
        self.chunk_size = config.chunk_size
        self.__api_key = key
        if http_client is not None and transport is not None:
            raise ConfigurationError("pass http_client= or transport=, not both")
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=httpx.Timeout(config.timeout), transport=transport)
        self._sleep: Callable[[float], Awaitable[None]] = _io.sleep
        self._random: Callable[[], float] = random.random
        self._tus: c.TusCapabilities | None = None
        self.files = AsyncFiles(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key='[redacted]')"

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the connection pool (not an ``http_client`` you passed in)."""
        if self._owns_http:
            await self._http.aclose()

    # -- HTTP ----------------------------------------------------------------------------------

    def _url(self, path: str, query: Mapping[str, int | str | None] | None = None) -> str:
        return c.url(self.base_url, path, query)

    async def _send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: AsyncIterator[bytes] | bytes | None = None,
        auth: bool = True,
        stream: bool = False,
        timeout: float | None = None,
    ) -> httpx.Response:
        """One attempt; any status. Transport failures become APIConnectionError."""
        request = self._http.build_request(
            method,
            url,
            headers=c.headers(self.__api_key if auth else None, headers),
            content=content,
            timeout=httpx.Timeout(timeout) if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )
        try:
            return await self._http.send(request, stream=stream)
        except httpx.TransportError as exc:
            raise c.connection_error(exc) from exc

    async def _json(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: AsyncIterator[bytes] | bytes | None = None,
        auth: bool = True,
    ) -> tuple[httpx.Response, Any]:
        """One attempt that raises the mapped error for a non-2xx answer; returns it and its JSON."""
        response = await self._send(method, url, headers=headers, content=content, auth=auth)
        if not 200 <= response.status_code < 300:
            raise error_from_response(response.status_code, response.headers, response.content)
        if not response.content:
            return response, None
        try:
            return response, response.json()
        except ValueError:
            raise FileshareError(
                f"{response.status_code}: the answer is not JSON",
                status=response.status_code,
                request_id=response.headers.get("x-request-id"),
            ) from None

    async def _retrying(self, attempt: Callable[[], Awaitable[T]], can_retry: bool = True) -> T:
        """Runs ``attempt`` until it succeeds, fails for good, or ``max_retries`` retries are spent."""
        for number in itertools.count():
            try:
                return await attempt()
            except FileshareError as error:
                if number >= self.max_retries or not can_retry or not c.is_retryable(error):
                    raise
                await self._sleep(c.retry_delay(number, error, self._random))
        raise AssertionError("unreachable")

    async def _request(
        self, method: str, url: str, *, headers: Mapping[str, str] | None = None, auth: bool = True
    ) -> tuple[httpx.Response, Any]:
        """A call without a body (GET, HEAD, DELETE, POST /uploads), with retries."""
        return await self._retrying(lambda: self._json(method, url, headers=headers, auth=auth))

    async def resumable_uploads(self) -> c.TusCapabilities:
        """What the server offers for resumable uploads (``OPTIONS /uploads``, asked once)."""
        if self._tus is None:
            try:
                response = await self._send("OPTIONS", self._url("/uploads"), auth=False)
            except APIConnectionError:
                return c.TusCapabilities(available=False, checksum_sha256=False, max_size=None)
            self._tus = c.tus_capabilities(response)
        return self._tus

    # -- calls ---------------------------------------------------------------------------------

    async def stats(self) -> StatsResult:
        """The account's statistics, limits and plan (fields this SDK does not know are kept)."""
        _, data = await self._request("GET", self._url("/stats"))
        return StatsResult.from_json(data)

    async def download(
        self,
        file_or_link: FileOrLink,
        destination: Destination,
        *,
        on_progress: c.ProgressCallback | None = None,
        resume: bool = True,
    ) -> DownloadResult:
        """Downloads a file (its record or its public link) to a path or a binary file object.

        With ``resume`` (default True) a partial destination file is continued with ``Range`` +
        ``If-Range``; a connection that drops is continued the same way within the retry budget.
        The finished bytes are checked against the ``ETag`` (the file's SHA-256).
        """
        expected: str | None = None
        total: int | None = None
        if isinstance(file_or_link, str):
            link = file_or_link
        elif isinstance(file_or_link, FileRecord):
            link, expected, total = file_or_link.public_link, file_or_link.sha256.lower(), file_or_link.size
        elif isinstance(file_or_link, Mapping) and isinstance(file_or_link.get("public_link"), str):
            link = file_or_link["public_link"]
            sha = file_or_link.get("sha256")
            expected = sha.lower() if isinstance(sha, str) else None
            size = file_or_link.get("size")
            total = size if isinstance(size, int) else None
        else:
            raise ConfigurationError("download needs a file record or its public_link")
        if not re.match(r"^https?://", link):
            raise ConfigurationError("download needs a file record or its public_link (an http(s) URL)")

        sink = _Sink(destination)
        hasher = hashlib.sha256()
        offset = resumed_from = 0
        try:
            existing = await sink.existing_size() if resume else 0
            if existing > 0:
                if expected is None or total is None:
                    # A link alone: HEAD (not counted as a download) tells the ETag and the size.
                    head, _ = await self._request("HEAD", link, headers={"accept": "*/*"}, auth=False)
                    expected = c.etag_sha256(head.headers.get("etag"))
                    total = c.int_header(head, "content-length")
                if expected is not None and total is not None and existing <= total:
                    await sink.hash_existing(hasher, existing)
                    offset = resumed_from = existing
                    if offset == total:
                        if hasher.hexdigest() == expected:
                            if on_progress:
                                on_progress(offset, total)
                            sink.start_at = offset
                            await sink.close(True)
                            return DownloadResult(size=offset, sha256=expected, resumed_from=resumed_from)
                        offset = resumed_from = 0  # complete length but other bytes: start again
                        hasher = hashlib.sha256()
            sink.start_at = offset
            failures = 0
            while True:
                headers = {"accept": "*/*", "accept-encoding": "identity"}
                if offset > 0:
                    headers["range"] = f"bytes={offset}-"
                    if expected:
                        headers["if-range"] = f'"{expected}"'
                before = offset
                try:
                    response = await self._send("GET", link, headers=headers, auth=False, stream=True)
                    try:
                        status = response.status_code
                        if status == 416 and offset > 0 and sink.can_restart:
                            await sink.restart()
                            offset = resumed_from = 0
                            hasher = hashlib.sha256()
                            continue
                        if status not in (200, 206):
                            body = await response.aread()
                            raise error_from_response(status, response.headers, body)
                        etag = c.etag_sha256(response.headers.get("etag"))
                        if etag and expected and etag != expected and offset == 0:
                            expected = etag
                        expected = expected or etag
                        if status == 200:
                            total = c.int_header(response, "content-length") or total
                            if offset > 0:
                                # The server sent the whole file (If-Range did not match): start over.
                                if not sink.can_restart:
                                    raise FileshareError(
                                        "the server restarted the download from byte 0, which a file object destination cannot take"
                                    )
                                await sink.restart()
                                offset = resumed_from = 0
                                hasher = hashlib.sha256()
                        else:
                            content_range = response.headers.get("content-range", "")
                            match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", content_range)
                            if not match or int(match.group(1)) != offset:
                                raise FileshareError(f"unexpected Content-Range {content_range!r} for a download from byte {offset}")
                            total = int(match.group(3))
                        if on_progress:
                            on_progress(offset, total)
                        async for chunk in response.aiter_bytes():
                            hasher.update(chunk)
                            await sink.write(chunk)
                            offset += len(chunk)
                            if on_progress:
                                on_progress(offset, total)
                    except httpx.TransportError as exc:
                        raise c.connection_error(exc) from exc
                    finally:
                        await response.aclose()
                    if total is not None and offset < total:
                        raise APIConnectionError(f"the connection ended after {offset} of {total} bytes")
                    break
                except FileshareError as error:
                    if offset > before:
                        failures = 0  # progress was made: the budget starts again
                    can_resume = offset == 0 or sink.can_restart or expected is not None
                    if not c.is_retryable(error) or failures >= self.max_retries or not can_resume:
                        raise
                    await self._sleep(c.retry_delay(failures, error, self._random))
                    failures += 1
            actual = hasher.hexdigest()
            if expected is not None and actual != expected:
                hint = (
                    f" (the download continued a partial file of {resumed_from} bytes: download again with resume=False)"
                    if resumed_from > 0
                    else ""
                )
                raise IntegrityError(
                    f"the downloaded bytes hash to {actual}, not to the ETag's {expected}{hint}", expected=expected, actual=actual
                )
            await sink.close(True)
            return DownloadResult(size=offset, sha256=actual, resumed_from=resumed_from)
        except BaseException:
            await sink.close(False)
            raise


class _Sink:
    """A download destination: a path (created, continued, truncated) or a file object."""

    def __init__(self, destination: Destination) -> None:
        self.start_at = 0
        self._file: IO[bytes] | None = None
        if isinstance(destination, (str, os.PathLike)):
            self.path: str | None = os.fsdecode(os.fspath(destination))
            self.can_restart = True
        elif hasattr(destination, "write"):
            self.path = None
            self._file = destination
            self.can_restart = False
        else:
            raise ConfigurationError("unsupported download destination: pass a path or a binary file object")

    async def existing_size(self) -> int:
        if self.path is None:
            return 0
        try:
            return await _io.run(os.path.getsize, self.path)
        except OSError:
            return 0

    async def _open(self) -> IO[bytes]:
        if self._file is None:
            assert self.path is not None
            self._file = await _io.run(c.open_for_write, self.path, self.start_at)
        return self._file

    async def write(self, data: bytes) -> None:
        file = await self._open()
        await _io.run(file.write, data)

    async def restart(self) -> None:
        self.start_at = 0
        if self.path is not None and self._file is not None:
            await _io.run(self._file.seek, 0)
            await _io.run(self._file.truncate)

    async def hash_existing(self, hasher: Any, length: int) -> None:
        assert self.path is not None
        file = await _io.run(c.open_for_read, self.path)
        try:
            left = length
            while left > 0:
                chunk = await _io.run(file.read, min(left, c.READ_SIZE))
                if not chunk:
                    break
                hasher.update(chunk)
                left -= len(chunk)
        finally:
            await _io.run(file.close)

    async def close(self, finished: bool) -> None:
        if self.path is None:
            if finished and self._file is not None and hasattr(self._file, "flush"):
                await _io.run(self._file.flush)
            return
        if finished:
            await self._open()  # an empty file is still a file
        if self._file is not None:
            file, self._file = self._file, None
            await _io.run(file.close)


class AsyncFiles:
    """``client.files``: upload, list, iterate, get, delete."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def upload(
        self,
        source: UploadInput,
        *,
        filename: str | None = None,
        content_type: str | None = None,
        on_progress: c.ProgressCallback | None = None,
        resumable: bool | None = None,
        size: int | None = None,
        chunk_size: int | None = None,
    ) -> FileRecord:
        """Uploads a file and returns its record.

        ``source``: a path, bytes, a binary file object or an iterable of bytes. Sources of at least
        ``resumable_threshold`` bytes use resumable uploads when the server offers them;
        ``resumable=True`` forces them, ``resumable=False`` forbids them. The SHA-256 of the bytes
        sent is compared with the server's: a mismatch raises IntegrityError.
        """
        client = self._client
        prepared = to_upload_source(source, size)
        name = filename or prepared.name or "file"
        if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
            raise ConfigurationError("chunk_size must be a positive integer")
        use_tus = resumable is True
        if resumable is None and prepared.size is not None and prepared.size >= client.resumable_threshold:
            use_tus = (await client.resumable_uploads()).available
        if use_tus:
            capabilities = await client.resumable_uploads()
            if not capabilities.available:
                raise ConfigurationError("the server does not offer resumable uploads (OPTIONS /uploads)")
            return await self._upload_tus(
                prepared, name, content_type, chunk_size or client.chunk_size, capabilities.checksum_sha256, on_progress
            )
        return await self._upload_multipart(prepared, name, content_type, on_progress)

    async def _upload_multipart(
        self, source: UploadSource, filename: str, content_type: str | None, on_progress: c.ProgressCallback | None
    ) -> FileRecord:
        client = self._client
        frame = c.multipart_frame(filename, content_type or "application/octet-stream")
        total = source.size

        async def body(hasher: Any) -> AsyncIterator[bytes]:
            yield frame.head
            sent = 0
            async for chunk in source.aiter_chunks():
                hasher.update(chunk)
                for at in range(0, len(chunk), c.SLICE):
                    piece = chunk[at : at + c.SLICE]
                    yield piece
                    sent += len(piece)
                    if on_progress:
                        on_progress(sent, total)
            yield frame.tail

        async def attempt() -> tuple[Any, str]:
            hasher = hashlib.sha256()
            headers = {"content-type": frame.content_type}
            if total is not None:
                # A declared length lets the server refuse a file that is too large before it is sent.
                headers["content-length"] = str(len(frame.head) + total + len(frame.tail))
            if on_progress:
                on_progress(0, total)
            _, data = await client._json("POST", client._url("/files/upload"), headers=headers, content=body(hasher))
            return data, hasher.hexdigest()

        data, actual = await client._retrying(attempt, can_retry=source.replayable)
        file = FileRecord.from_json(data)
        c.check_sha256(file.file_id, file.sha256, actual)
        if on_progress:
            on_progress(file.size, total if total is not None else file.size)
        return file

    async def _upload_tus(
        self,
        source: UploadSource,
        filename: str,
        content_type: str | None,
        chunk_size: int,
        checksum: bool,
        on_progress: c.ProgressCallback | None,
    ) -> FileRecord:
        """Create, then PATCH chunk after chunk (``Upload-Checksum``). A chunk that fails with a
        retryable error, 409, 423 or 460 is resumed where the server stands (HEAD), up to
        ``max_retries`` times in a row; each chunk that gets through resets the count."""
        client = self._client
        size = source.size
        create_url = client._url("/uploads")
        create_headers = {**c.TUS_HEADERS, "upload-metadata": c.tus_metadata(filename, content_type)}
        if size is None:
            create_headers["upload-defer-length"] = "1"
        else:
            create_headers["upload-length"] = str(size)
        created, _ = await client._request("POST", create_url, headers=create_headers)
        location = created.headers.get("location")
        if not location:
            raise ServerError("the server created an upload without a Location", status=created.status_code)
        upload_url = str(httpx.URL(create_url).join(location))
        hasher = hashlib.sha256()
        file_id = created.headers.get("fileshare-file-id")
        offset = 0
        finished = False
        chunks = source.aiter_chunks()
        pieces = _Pieces()
        ended = False
        limit = max(1, min(chunk_size, size if size is not None else chunk_size))
        try:
            failures = 0
            while file_id is None:
                # Fill up to one chunk, and peek one read further so the last chunk knows it is the last.
                while not ended and pieces.length <= limit:
                    data = await _io.next_chunk(chunks)
                    if data is None:
                        ended = True
                    else:
                        pieces.append(data)
                length = min(limit, pieces.length)
                last = ended and pieces.length <= limit
                views = pieces.head(length)
                headers = {
                    **c.TUS_HEADERS,
                    "upload-offset": str(offset),
                    "content-type": "application/offset+octet-stream",
                    "content-length": str(length),
                }
                if checksum:
                    digest = hashlib.sha256()
                    for view in views:
                        digest.update(view)
                    headers["upload-checksum"] = "sha256 " + base64.b64encode(digest.digest()).decode("ascii")
                if size is None and last:
                    headers["upload-length"] = str(offset + length)
                chunk_start = offset
                try:
                    answer, _ = await client._json(
                        "PATCH", upload_url, headers=headers, content=_chunk_body(views, chunk_start, size, on_progress)
                    )
                    failures = 0
                except FileshareError as error:
                    if not c.is_tus_resumable(error) or failures >= client.max_retries:
                        raise
                    failures += 1
                    if not (isinstance(error, BadRequestError) and error.status == 409):
                        await client._sleep(c.retry_delay(failures - 1, error, client._random))
                    # Where does the upload stand? (HEAD is retried on its own.)
                    answer, _ = await client._request("HEAD", upload_url, headers=c.TUS_HEADERS)
                new_offset = c.int_header(answer, "upload-offset")
                file_id = answer.headers.get("fileshare-file-id")
                if new_offset is None or not chunk_start <= new_offset <= chunk_start + length:
                    raise FileshareError(
                        f"the upload stands at offset {new_offset}, outside the chunk sent "
                        f"({chunk_start}-{chunk_start + length}); start a new upload"
                    )
                # The bytes the server confirmed go into the whole-file SHA-256; the rest is sent again.
                kept = new_offset - chunk_start
                for view in pieces.head(kept):
                    hasher.update(view)
                pieces.drop(kept)
                offset = new_offset
                if on_progress:
                    on_progress(offset, size)
                if file_id is None and last and pieces.length == 0:
                    if size is not None and offset == size:
                        break  # complete, but the answer named no file
                    raise FileshareError(f"the source ended at {offset} bytes, short of its declared {size} bytes")
            finished = True
        finally:
            await _io.close_iterator(chunks)
            if not finished:
                # Give the daily upload slot back; best effort, the server also expires unfinished uploads.
                try:
                    await client._send("DELETE", upload_url, headers=c.TUS_HEADERS, timeout=5.0)
                except FileshareError:
                    pass

        _, status = await client._request("GET", upload_url)
        raw = status.get("upload", {}).get("file") if isinstance(status, dict) else None
        if not raw:
            raise ServerError("the upload completed but the server names no file")
        file = FileRecord.from_json(raw)
        c.check_sha256(file.file_id, file.sha256, hasher.hexdigest())
        return file

    async def list(self, *, page: int | None = None, limit: int | None = None) -> FileList:
        """One page of the account's files, newest first (``page`` from 1, ``limit`` 1 to 100)."""
        client = self._client
        _, data = await client._request("GET", client._url("/files", {"page": page, "limit": limit}))
        return FileList.from_json(data)

    async def iterate(self, *, limit: int = 100) -> AsyncIterator[FileRecord]:
        """Every file of the account, page after page (``limit`` per request). A file is never
        yielded twice, even when uploads during the iteration shift the pages."""
        seen: set[int] = set()
        for page in itertools.count(1):
            result = await self.list(page=page, limit=limit)
            for file in result.files:
                if file.file_id not in seen:
                    seen.add(file.file_id)
                    yield file
            if len(result.files) < limit or page >= result.pagination.pages:
                return

    async def get(self, file_id: int | str) -> FileRecord:
        """One file's record."""
        client = self._client
        _, data = await client._request("GET", client._url(c.file_id_path(file_id)))
        if not isinstance(data, dict):
            raise FileshareError("the answer holds no file object")
        return FileRecord.from_json(data.get("file", {}))

    async def delete(self, file_id: int | str) -> None:
        """Deletes a file; its public link stops working at once."""
        client = self._client
        await client._request("DELETE", client._url(c.file_id_path(file_id)))


class _Pieces:
    """Bytes read from a source and not yet confirmed by the server, kept as the pieces read."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self.length = 0

    def append(self, data: bytes) -> None:
        self._pieces.append(data)
        self.length += len(data)

    def head(self, length: int) -> list[memoryview]:
        views: list[memoryview] = []
        for piece in self._pieces:
            if length <= 0:
                break
            view = memoryview(piece)[:length]
            views.append(view)
            length -= len(view)
        return views

    def drop(self, length: int) -> None:
        self.length -= length
        while length > 0:
            piece = self._pieces[0]
            if len(piece) <= length:
                self._pieces.pop(0)
                length -= len(piece)
            else:
                self._pieces[0] = piece[length:]
                length = 0


async def _chunk_body(
    views: Any, start: int, total: int | None, on_progress: c.ProgressCallback | None
) -> AsyncIterator[bytes]:
    sent = 0
    for view in views:
        for at in range(0, len(view), c.SLICE):
            piece = bytes(view[at : at + c.SLICE])
            yield piece
            sent += len(piece)
            if on_progress:
                on_progress(start + sent, total)
