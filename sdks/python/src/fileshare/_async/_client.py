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
    NotFoundError,
    ServerError,
    error_from_response,
)
from .._records import DownloadResult, FileList, FileRecord, Link, StatsResult, member
from .._source import UploadInput, UploadSource, to_upload_source
from . import _io

T = TypeVar("T")

FileOrLink = Union[FileRecord, Link, Mapping[str, Any], str]
"""A file record (its ``public_link``, ``sha256`` and ``size`` are used), a link record, or a link."""
Destination = Union[str, "os.PathLike[str]", IO[bytes]]
"""Where a download goes: a path, or a binary file object opened for writing."""


class AsyncClient:
    """The Fileshare API client. Use it as a context manager, or call ``close()``.

    ``base_url`` (ends in ``/api/v1``) and ``api_key`` default to ``FILESHARE_BASE_URL`` and
    ``FILESHARE_API_KEY``. ``timeout`` (seconds) bounds connecting and every stretch without a byte
    sent or received, never a whole transfer. The key never shows in ``repr`` or messages.
    """

    files: AsyncFiles
    """Upload, list, iterate, get, update, delete."""
    links: AsyncLinks
    """A file's links: create, list, get, update, delete, rotate."""
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
        self._grants = c.Grants()
        self.files = AsyncFiles(self)
        self.links = AsyncLinks(self)

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
        follow_redirects: bool | None = None,
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
            if follow_redirects is None:
                return await self._http.send(request, stream=stream)
            return await self._http.send(request, stream=stream, follow_redirects=follow_redirects)
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

    async def _retrying(
        self, attempt: Callable[[], Awaitable[T]], retry: Callable[[BaseException], bool] = c.is_retryable
    ) -> T:
        """Runs ``attempt`` until it succeeds, fails for good (``retry(error)`` is false), or
        ``max_retries`` retries are spent."""
        for number in itertools.count():
            try:
                return await attempt()
            except FileshareError as error:
                if number >= self.max_retries or not retry(error):
                    raise
                await self._sleep(c.retry_delay(number, error, self._random))
        raise AssertionError("unreachable")

    async def _request(
        self, method: str, url: str, *, headers: Mapping[str, str] | None = None, auth: bool = True
    ) -> tuple[httpx.Response, Any]:
        """A call without a body (GET, HEAD, DELETE, POST /uploads with its idempotency key), with retries."""
        return await self._retrying(lambda: self._json(method, url, headers=headers, auth=auth))

    async def _call(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        retry: Callable[[BaseException], bool] = c.is_retryable,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """An API call (with a JSON body when ``body`` is given), retried as ``retry`` says; its JSON."""
        if body is not None:
            headers = {**(headers or {}), "content-type": "application/json"}
        url = self._url(path)
        _, data = await self._retrying(lambda: self._json(method, url, headers=headers, content=body), retry)
        return data

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
        password: str | None = None,
        on_progress: c.ProgressCallback | None = None,
        resume: bool = True,
    ) -> DownloadResult:
        """Downloads a file (its record, a link record or a link) to a path or a binary file object.

        The link is asked for a grant first (``POST``, with ``password`` when the link has one; it
        counts one download), then the grant URL is downloaded; the grant counts nothing more, so a
        resume within the call, or a later call of this client for the same link within 50 minutes,
        continues for free. With ``resume`` (default True) a partial destination file is continued
        with ``Range`` + ``If-Range``; a connection that drops is continued the same way within the
        retry budget. The finished bytes are checked against the ``ETag`` (the file's SHA-256).
        """
        link, expected, total = c.download_target(file_or_link)
        sink = _Sink(destination)
        hasher = hashlib.sha256()
        offset = resumed_from = 0
        grant: str | None = None
        try:
            existing = await sink.existing_size() if resume else 0
            if existing > 0:
                if expected is None or total is None:
                    # A link alone: HEAD of the grant (not counted) tells the ETag and the size.
                    grant = await self._grant(link, password)
                    head, _ = await self._request("HEAD", grant, headers={"accept": "*/*"}, auth=False)
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
                            self._grants.forget(link)
                            return DownloadResult(size=offset, sha256=expected, resumed_from=resumed_from)
                        offset = resumed_from = 0  # complete length but other bytes: start again
                        hasher = hashlib.sha256()
            if grant is None:
                grant = await self._grant(link, password)
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
                    response = await self._send("GET", grant, headers=headers, auth=False, stream=True)
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
            self._grants.forget(link)
            return DownloadResult(size=offset, sha256=actual, resumed_from=resumed_from)
        except BaseException as error:
            await sink.close(False)
            if grant is not None:
                # A grant that answers 404 died with its link; any other grant may resume this download.
                if isinstance(error, NotFoundError):
                    self._grants.forget(link)
                else:
                    self._grants.keep(link, grant)
            raise

    async def _grant(self, link: str, password: str | None) -> str:
        """A grant URL for ``link``: one kept from a download of it that did not finish, else a new
        one (``POST`` to the link, which counts one download: sent again only after a 429 or 503)."""
        kept = self._grants.get(link)
        if kept is not None:
            return kept
        if password is None:
            headers: dict[str, str] = {}
            body = b""
        else:
            headers = {"content-type": "application/json"}
            body = c.json_body({"password": password}, none_clears=False)

        async def attempt() -> str:
            response = await self._send("POST", link, headers=headers, content=body, auth=False, follow_redirects=False)
            if response.status_code >= 400:
                raise error_from_response(response.status_code, response.headers, response.content)
            return c.grant_url(response, link)

        return await self._retrying(attempt, c.is_retryable_answer)


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
    """``client.files``: upload, list, iterate, get, update, delete."""

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
        expires_in: c.Seconds | None = None,
        idempotency_key: str | None = None,
    ) -> FileRecord:
        """Uploads a file and returns its record.

        ``source``: a path, bytes, a binary file object or an iterable of bytes. Sources of at least
        ``resumable_threshold`` bytes use resumable uploads when the server offers them;
        ``resumable=True`` forces them, ``resumable=False`` forbids them. The SHA-256 of the bytes
        sent is compared with the server's: a mismatch raises IntegrityError. ``expires_in``
        (seconds or a timedelta) gives the file a lifetime: it is gone for everyone after that.

        Every attempt of the call carries one ``Idempotency-Key`` (``idempotency_key``, else a new
        UUID): a retry after a lost answer gets the stored file back instead of storing it twice.
        Pass your own key to make a later call (another process, after a crash) the same upload:
        it returns the first call's file, or continues its resumable upload where it stands.
        """
        client = self._client
        prepared = to_upload_source(source, size)
        name = filename or prepared.name or "file"
        extra_headers = {**c.expiry_headers(expires_in), **c.idempotency_headers(idempotency_key)}
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
                prepared,
                name,
                content_type,
                chunk_size or client.chunk_size,
                capabilities.checksum_sha256,
                on_progress,
                extra_headers,
                keep_unfinished=idempotency_key is not None,
            )
        return await self._upload_multipart(prepared, name, content_type, on_progress, extra_headers)

    async def _upload_multipart(
        self,
        source: UploadSource,
        filename: str,
        content_type: str | None,
        on_progress: c.ProgressCallback | None,
        extra_headers: Mapping[str, str],
    ) -> FileRecord:
        client = self._client
        frame = c.multipart_frame(filename, content_type or "application/octet-stream")
        total = source.size

        async def body(digest: _Digest) -> AsyncIterator[bytes]:
            yield frame.head
            sent = 0
            chunks = source.aiter_chunks()
            try:
                async for chunk in chunks:
                    digest.hasher.update(chunk)
                    for at in range(0, len(chunk), c.SLICE):
                        piece = chunk[at : at + c.SLICE]
                        yield piece
                        sent += len(piece)
                        if on_progress:
                            on_progress(sent, total)
            finally:
                await _io.close_iterator(chunks)  # the source's file, when the body was not sent whole
            digest.complete = True
            yield frame.tail

        async def attempt() -> tuple[httpx.Response, Any, str | None]:
            digest = _Digest()
            headers = {**extra_headers, "content-type": frame.content_type}
            if total is not None:
                # A declared length lets the server refuse a file that is too large before it is sent.
                headers["content-length"] = str(len(frame.head) + total + len(frame.tail))
            if on_progress:
                on_progress(0, total)
            content = body(digest)
            try:
                response, data = await client._json("POST", client._url("/files/upload"), headers=headers, content=content)
            finally:
                await _io.close_iterator(content)
            if digest.complete:
                return response, data, digest.hasher.hexdigest()
            # The server answered before it read the whole body (it replays the key's first answer):
            # hash the source apart, where it can be read again.
            return response, data, await _sha256_of(source) if source.replayable else None

        response, data, actual = await client._retrying(attempt, c.is_retryable if source.replayable else c.never)
        file = FileRecord.from_json(data)
        if actual is not None:
            c.check_sha256(file.file_id, file.sha256, actual, replayed=c.is_replay(response))
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
        extra_headers: Mapping[str, str],
        *,
        keep_unfinished: bool,
    ) -> FileRecord:
        """Create, then PATCH chunk after chunk (``Upload-Checksum``). A chunk that fails with a
        retryable error, 409, 423 or 460 is resumed where the server stands (HEAD), up to
        ``max_retries`` times in a row; each chunk that gets through resets the count.

        An upload that fails is deleted, unless ``keep_unfinished`` (the caller's own idempotency
        key, which a later call can continue it with) and the server did not refuse it for good."""
        client = self._client
        size = source.size
        create_url = client._url("/uploads")
        create_headers = {**extra_headers, **c.TUS_HEADERS, "upload-metadata": c.tus_metadata(filename, content_type)}
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
        chunks = source.aiter_chunks()
        pieces = _Pieces()
        ended = False
        limit = max(1, min(chunk_size, size if size is not None else chunk_size))
        try:
            if c.is_replay(created):
                # The idempotency key's first call created this upload: continue where it stands,
                # hashing (not sending) the bytes the server already holds.
                head, _ = await client._request("HEAD", upload_url, headers=c.TUS_HEADERS)
                offset = c.int_header(head, "upload-offset") or 0
                file_id = head.headers.get("fileshare-file-id")
                skipped = 0
                while skipped < offset:
                    data = await _io.next_chunk(chunks)
                    if data is None:
                        raise FileshareError(
                            f"the source ended after {skipped} bytes, short of the {offset} bytes the upload of "
                            "this idempotency key already holds"
                        )
                    take = min(len(data), offset - skipped)
                    hasher.update(data[:take])
                    skipped += take
                    if take < len(data):
                        pieces.append(data[take:])
                if on_progress:
                    on_progress(offset, size)
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
        except BaseException as error:
            if not keep_unfinished or c.is_final(error):
                # Give the daily upload slot and the reserved storage back; best effort, the server
                # also expires unfinished uploads.
                try:
                    await client._send("DELETE", upload_url, headers=c.TUS_HEADERS, timeout=5.0)
                except FileshareError:
                    pass
            raise
        finally:
            await _io.close_iterator(chunks)

        _, status = await client._request("GET", upload_url)
        raw = status.get("upload", {}).get("file") if isinstance(status, dict) else None
        if not raw:
            raise ServerError("the upload completed but the server names no file")
        file = FileRecord.from_json(raw)
        c.check_sha256(file.file_id, file.sha256, hasher.hexdigest())
        return file

    async def list(self, *, page: int | None = None, limit: int | None = None, before_id: int | None = None) -> FileList:
        """One page of the account's files, newest first (``limit`` 1 to 100): page ``page`` (from
        1), or the files whose ``file_id`` is below ``before_id`` (a page's
        ``pagination.next_before_id``), which no upload or deletion meanwhile can shift. Not both."""
        _, data = await self._page(page=page, limit=limit, before_id=before_id)
        return FileList.from_json(data)

    async def _page(self, **query: int | None) -> tuple[httpx.Response, Any]:
        client = self._client
        return await client._request("GET", client._url("/files", query))

    async def iterate(self, *, limit: int = 100) -> AsyncIterator[FileRecord]:
        """Every file of the account, newest first, ``limit`` per request, each page asked by the
        ``next_before_id`` of the one before: files uploaded or deleted meanwhile (even the ones
        yielded, deleted as they come) shift nothing, and no file is yielded twice."""
        _, data = await self._page(limit=limit)
        if not c.pages_by_before_id(data):
            async for file in self._iterate_by_page(limit, FileList.from_json(data)):
                yield file
            return
        below: int | None = None  # the last file yielded: every later one is older
        asked: int | None = None
        while True:
            result = FileList.from_json(data)
            for file in result.files:
                if below is None or file.file_id < below:
                    below = file.file_id
                    yield file
            following = result.pagination.next_before_id
            if following is None:
                return
            if asked is not None and following >= asked:
                raise FileshareError(f"the server's next_before_id {following} does not move past {asked}")
            asked = following
            _, data = await self._page(limit=limit, before_id=following)

    async def _iterate_by_page(self, limit: int, first: FileList) -> AsyncIterator[FileRecord]:
        """Page numbers, for an older server without ``before_id``: a file is yielded once, but a
        deletion meanwhile can shift another out of view."""
        seen: set[int] = set()
        result = first
        for page in itertools.count(2):
            for file in result.files:
                if file.file_id not in seen:
                    seen.add(file.file_id)
                    yield file
            if len(result.files) < limit or page > result.pagination.pages:
                return
            result = await self.list(page=page, limit=limit)

    async def get(self, file_id: int | str) -> FileRecord:
        """One file's record."""
        data = await self._client._call("GET", c.id_path("files", file_id))
        return FileRecord.from_json(member(data, "file", "file object"))

    async def update(
        self,
        file_id: int | str,
        *,
        expires_in: c.Seconds | c.Unset = c.UNSET,
        expires_at: c.Instant | None | c.Unset = c.UNSET,
        filename: str | c.Unset = c.UNSET,
    ) -> FileRecord:
        """Changes a file's expiry or name; arguments left out stay as they are.

        ``expires_in`` (seconds or a timedelta from now) or ``expires_at`` (an aware datetime or a
        UTC ``YYYY-MM-DD HH:MM:SS`` string), not both; ``expires_at=None`` removes the expiry."""
        body = c.json_body({"expires_in": expires_in, "expires_at": expires_at, "filename": filename}, none_clears=True)
        data = await self._client._call("PATCH", c.id_path("files", file_id), body)
        return FileRecord.from_json(member(data, "file", "file object"))

    async def delete(self, file_id: int | str) -> None:
        """Deletes a file; its links stop working at once."""
        await self._client._call("DELETE", c.id_path("files", file_id))


class AsyncLinks:
    """``client.links``: a file's links, each with its own URL, expiry, download limit and password."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(
        self,
        file_id: int | str,
        *,
        label: str | None = None,
        expires_in: c.Seconds | None = None,
        expires_at: c.Instant | None = None,
        max_downloads: int | None = None,
        password: str | None = None,
        idempotency_key: str | None = None,
    ) -> Link:
        """A new link to a file (without arguments: a link with no policy).

        ``expires_in`` (seconds or a timedelta) or ``expires_at`` (an aware datetime or a UTC
        ``YYYY-MM-DD HH:MM:SS`` string), not both; ``max_downloads`` counts downloads through the
        link; ``password`` (8 to 1024 characters) is asked by ``download(..., password=)`` and by
        the link's page. Every attempt carries one ``Idempotency-Key`` (``idempotency_key``, else a
        new UUID), so a retry after a dropped connection never makes a second link."""
        fields = dict(label=label, expires_in=expires_in, expires_at=expires_at, max_downloads=max_downloads, password=password)
        body = c.json_body(fields, none_clears=False)
        key = c.idempotency_headers(idempotency_key)
        data = await self._client._call("POST", c.id_path("files", file_id) + "/links", body, headers=key)
        return Link.from_json(member(data, "link", "link object"))

    async def list(self, file_id: int | str) -> list[Link]:
        """A file's links: the default link first, then the newest first (revoked ones for 30 days)."""
        data = await self._client._call("GET", c.id_path("files", file_id) + "/links")
        links = member(data, "links", "list of links")
        if not isinstance(links, list):
            raise FileshareError("the answer holds no list of links")
        return [Link.from_json(raw) for raw in links]

    async def get(self, link_id: int | str) -> Link:
        """One link."""
        data = await self._client._call("GET", c.id_path("links", link_id))
        return Link.from_json(member(data, "link", "link object"))

    async def update(
        self,
        link_id: int | str,
        *,
        label: str | None | c.Unset = c.UNSET,
        expires_in: c.Seconds | c.Unset = c.UNSET,
        expires_at: c.Instant | None | c.Unset = c.UNSET,
        max_downloads: int | None | c.Unset = c.UNSET,
        password: str | None | c.Unset = c.UNSET,
    ) -> Link:
        """Changes a link's policy. An argument left out stays as it is; ``None`` clears it (no
        label, no expiry, no download limit, no password). ``max_downloads`` cannot go below the
        link's ``download_count``."""
        fields = dict(label=label, expires_in=expires_in, expires_at=expires_at, max_downloads=max_downloads, password=password)
        body = c.json_body(fields, none_clears=True)
        data = await self._client._call("PATCH", c.id_path("links", link_id), body)
        return Link.from_json(member(data, "link", "link object"))

    async def delete(self, link_id: int | str) -> None:
        """Revokes a link: its URL answers 404 at once. The default link cannot be deleted
        (``BadRequestError``, 409 ``default_link_required``): rotate it instead."""
        await self._client._call("DELETE", c.id_path("links", link_id))

    async def rotate(self, link_id: int | str) -> Link:
        """Gives a link a new URL (the old one answers 404 at once); its policy and counts stay.
        Rotating the default link changes the file's ``public_link``."""
        data = await self._client._call("POST", c.id_path("links", link_id) + "/rotate", retry=c.is_retryable_answer)
        return Link.from_json(member(data, "link", "link object"))


class _Digest:
    """The SHA-256 of the bytes one upload attempt read from its source, and whether it read them all."""

    def __init__(self) -> None:
        self.hasher = hashlib.sha256()
        self.complete = False


async def _sha256_of(source: UploadSource) -> str:
    hasher = hashlib.sha256()
    async for chunk in source.aiter_chunks():
        hasher.update(chunk)
    return hasher.hexdigest()


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
