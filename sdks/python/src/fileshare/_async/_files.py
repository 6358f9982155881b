"""``client.files``: uploads (one multipart request, or resumable in chunks), listing, paging and the rest."""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from .. import _common as c
from .._errors import BadRequestError, ConfigurationError, FileshareError, ServerError
from .._logs import logger
from .._records import ArchiveResult, BulkDeleteResult, FileList, FileRecord, member
from .._source import UploadInput, UploadSource, to_upload_source
from . import _archive, _io
from ._download import Destination

if TYPE_CHECKING:
    from ._client import AsyncClient

MAX_BULK_DELETE = 100
"""The most files one ``delete_many`` takes (the server's limit)."""


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
        upload_url: str | None = None,
        on_upload_created: Callable[[str], Any] | None = None,
        keep_on_failure: bool | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
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

        Resumable uploads across processes: ``on_upload_created(url)`` is called with the upload's
        URL as soon as it exists; ``upload_url=`` continues that upload (after a ``HEAD``) from
        another process, with the same source, sending only the bytes the server lacks.
        ``keep_on_failure``: True keeps an upload that failed (to continue it later), False
        deletes it; by default it is kept when you can continue it (``idempotency_key``,
        ``on_upload_created`` or ``upload_url`` given) and the server did not refuse it for good.
        """
        client = self._client._for_call(timeout, max_retries, extra_headers)
        prepared = to_upload_source(source, size)
        name = filename or prepared.name or "file"
        call_headers = {**c.expiry_headers(expires_in), **c.idempotency_headers(idempotency_key)}
        if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
            raise ConfigurationError("chunk_size must be a positive integer")
        if upload_url is not None and (resumable is False or not isinstance(upload_url, str) or not upload_url):
            raise ConfigurationError("upload_url continues a resumable upload: pass its URL, without resumable=False")
        use_tus = resumable is True or upload_url is not None
        if resumable is None and prepared.size is not None and prepared.size >= client.resumable_threshold:
            use_tus = (await client.resumable_uploads()).available
        if use_tus:
            capabilities = await client.resumable_uploads()
            if not capabilities.available:
                raise ConfigurationError("the server does not offer resumable uploads (OPTIONS /uploads)")
            if keep_on_failure is None:
                continuable = idempotency_key is not None or upload_url is not None or on_upload_created is not None
                keep = _KEEP_UNLESS_REFUSED if continuable else _DELETE
            else:
                keep = _KEEP if keep_on_failure else _DELETE
            return await self._upload_tus(
                client,
                prepared,
                name,
                content_type,
                chunk_size or client.chunk_size,
                capabilities.checksum_sha256,
                on_progress,
                call_headers,
                upload_url=upload_url,
                on_upload_created=on_upload_created,
                keep=keep,
            )
        return await self._upload_multipart(client, prepared, name, content_type, on_progress, call_headers)

    async def _upload_multipart(
        self,
        client: AsyncClient,
        source: UploadSource,
        filename: str,
        content_type: str | None,
        on_progress: c.ProgressCallback | None,
        extra_headers: Mapping[str, str],
    ) -> FileRecord:
        frame = c.multipart_frame(filename, content_type or "application/octet-stream")
        total = source.size

        async def body(digest: _Digest) -> AsyncIterator[bytes]:
            yield frame.head
            sent = 0
            chunks = source.aiter_chunks()
            try:
                async for chunk in chunks:
                    await _io.update_hash(digest.hasher, chunk)
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
        client: AsyncClient,
        source: UploadSource,
        filename: str,
        content_type: str | None,
        chunk_size: int,
        checksum: bool,
        on_progress: c.ProgressCallback | None,
        extra_headers: Mapping[str, str],
        *,
        upload_url: str | None,
        on_upload_created: Callable[[str], Any] | None,
        keep: str,
    ) -> FileRecord:
        """Create, then PATCH chunk after chunk (``Upload-Checksum``). A chunk that fails with a
        retryable error, 409, 423 or 460 is resumed where the server stands (HEAD), up to
        ``max_retries`` times in a row; each chunk that gets through resets the count.

        An upload that fails is deleted or kept as ``keep`` says. With ``upload_url`` (or when the
        creation is the replay of an idempotency key's first call) the upload exists already: it is
        continued where it stands."""
        size = source.size
        create_url = client._url("/uploads")
        create_headers = {**extra_headers, **c.TUS_HEADERS, "upload-metadata": c.tus_metadata(filename, content_type)}
        if size is None:
            create_headers["upload-defer-length"] = "1"
        else:
            create_headers["upload-length"] = str(size)
        file_id: str | None = None
        if upload_url is None:
            created, _ = await client._request("POST", create_url, headers=create_headers)
            location = created.headers.get("location")
            if not location:
                raise c.response_error(created, "the server created an upload without a Location", ServerError)
            upload_url = str(httpx.URL(create_url).join(location))
            file_id = created.headers.get("fileshare-file-id")
            existing = c.is_replay(created)  # the idempotency key's first call created it
        else:
            upload_url = str(httpx.URL(create_url).join(upload_url))
            existing = True
        offset = 0
        if existing:
            # Where does it stand? (Before anything that could delete it: a wrong source must not.)
            head, _ = await client._request("HEAD", upload_url, headers=c.TUS_HEADERS)
            offset = c.int_header(head, "upload-offset") or 0
            file_id = head.headers.get("fileshare-file-id")
            length = c.int_header(head, "upload-length")
            if length is not None and size is not None and length != size:
                raise ConfigurationError(f"the upload at {upload_url} is of {length} bytes, but the source has {size}")
            logger.info("continuing the upload %s at byte %d", upload_url, offset)
        if on_upload_created:
            on_upload_created(upload_url)
        hasher = hashlib.sha256()
        chunks = source.aiter_chunks()
        pieces = _Pieces()
        ended = False
        limit = max(1, min(chunk_size, size if size is not None else chunk_size))
        try:
            if offset > 0:
                # Hash (not send) the bytes the server already holds.
                skipped = 0
                while skipped < offset:
                    data = await _io.next_chunk(chunks)
                    if data is None:
                        raise FileshareError(
                            f"the source ended after {skipped} bytes, short of the {offset} bytes the upload "
                            f"{upload_url} already holds"
                        )
                    take = min(len(data), offset - skipped)
                    await _io.update_hash(hasher, data[:take])
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
                        await _io.update_hash(digest, view)
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
                    delay = 0.0
                    if not (isinstance(error, BadRequestError) and error.status == 409):
                        delay = c.retry_delay(failures - 1, error, client._random)
                    c.log_retry(failures - 1, client.max_retries, delay, error)
                    if delay:
                        await client._sleep(delay)
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
                    await _io.update_hash(hasher, view)
                pieces.drop(kept)
                offset = new_offset
                if on_progress:
                    on_progress(offset, size)
                if file_id is None and last and pieces.length == 0:
                    if size is not None and offset == size:
                        break  # complete, but the answer named no file
                    raise FileshareError(f"the source ended at {offset} bytes, short of its declared {size} bytes")
        except BaseException as error:
            if keep == _DELETE or (keep == _KEEP_UNLESS_REFUSED and c.is_final(error)):
                # Give the daily upload slot and the reserved storage back; best effort, the server
                # also expires unfinished uploads.
                try:
                    await client._send("DELETE", upload_url, headers=c.TUS_HEADERS, timeout=5.0)
                except FileshareError:
                    pass
            else:
                logger.info("kept the unfinished upload %s (continue it with upload_url=)", upload_url)
            raise
        finally:
            await _io.close_iterator(chunks)

        answer, status = await client._request("GET", upload_url)
        raw = status.get("upload", {}).get("file") if isinstance(status, dict) else None
        if not raw:
            raise c.response_error(answer, "the upload completed but the server names no file", ServerError)
        file = FileRecord.from_json(raw)
        c.check_sha256(file.file_id, file.sha256, hasher.hexdigest())
        return file

    async def list(
        self,
        *,
        page: int | None = None,
        limit: int | None = None,
        before_id: int | None = None,
        q: str | None = None,
        type: str | Sequence[str] | None = None,
        state: c.FileState | Sequence[c.FileState] | None = None,
        sort: c.FileSort | None = None,
        order: c.SortOrder | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> FileList:
        """One page of the account's files (``limit`` 1 to 100), newest first unless ``sort`` and
        ``order`` say otherwise, only those whose name contains ``q`` (any case), of a ``type`` and in
        a ``state`` when given (several values of one: any of them; different filters: all): page
        ``page`` (from 1), or the files after ``before_id`` (a page's
        ``pagination.next_before_id``), which no upload or deletion meanwhile can shift. Not both;
        ``before_id`` only in upload order (``sort="upload_date"``, either ``order``).

        ``sort``: ``"upload_date"`` (the default), ``"filename"``, ``"size"`` or
        ``"download_count"``, ties by ``file_id``; ``order``: ``"desc"`` (the default) or ``"asc"``.
        ``type``: a top-level media type (``"image"``: ``image/png``, ``image/jpeg``, ...) or an
        exact ``"type/subtype"`` (``"application/pdf"``), any case; ``state``: ``"expiring"``,
        ``"expired_links"`` or ``"from_upload_request"``. A list of either (at most 20) is sent as
        the parameter repeated."""
        files = self._client._for_call(timeout, max_retries, extra_headers).files
        _, data = await files._page(
            page=page, limit=limit, before_id=before_id, q=q, sort=sort, order=order, type=type, state=state
        )
        return FileList.from_json(data)

    async def _page(self, **query: c.QueryValue) -> tuple[httpx.Response, Any]:
        client = self._client
        return await client._request("GET", client._url("/files", query))

    async def iterate(
        self,
        *,
        limit: int = 100,
        q: str | None = None,
        type: str | Sequence[str] | None = None,
        state: c.FileState | Sequence[c.FileState] | None = None,
        sort: c.FileSort | None = None,
        order: c.SortOrder | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[FileRecord]:
        """Every file of the account (only those whose name contains ``q``, of a ``type`` and in a
        ``state``, when given) in the order of ``sort`` and ``order`` (newest first by default),
        ``limit`` per request, the same search, filters and order on every page. In upload order each page is asked by the
        ``next_before_id`` of the one before: files uploaded or deleted meanwhile (even the ones
        yielded, deleted as they come) shift nothing, and no file is yielded twice. The other orders
        go by page number: no file twice, but one deleted or renamed meanwhile can shift another
        out of view. The options apply to each request."""
        files = self._client._for_call(timeout, max_retries, extra_headers).files
        async for file in files._iterate(limit, {"q": q, "sort": sort, "order": order, "type": type, "state": state}):
            yield file

    async def _iterate(self, limit: int, query: dict[str, c.QueryValue]) -> AsyncIterator[FileRecord]:
        """``query``: the search, filters and order, sent on every page."""
        _, data = await self._page(limit=limit, **query)
        if not c.by_upload_date(query["sort"]) or not c.pages_by_before_id(data):
            async for file in self._iterate_by_page(limit, query, FileList.from_json(data)):
                yield file
            return
        ascending = query["order"] == "asc"

        def after(file_id: int, mark: int) -> bool:
            return file_id > mark if ascending else file_id < mark

        last: int | None = None  # the last file yielded: every later one comes after it
        asked: int | None = None
        while True:
            result = FileList.from_json(data)
            for file in result.files:
                if last is None or after(file.file_id, last):
                    last = file.file_id
                    yield file
            following = result.pagination.next_before_id
            if following is None:
                return
            if asked is not None and not after(following, asked):
                raise FileshareError(f"the server's next_before_id {following} does not move past {asked}")
            asked = following
            _, data = await self._page(limit=limit, before_id=following, **query)

    async def _iterate_by_page(self, limit: int, query: dict[str, c.QueryValue], first: FileList) -> AsyncIterator[FileRecord]:
        """Page numbers, for the orders without ``before_id`` (and an older server): a file is
        yielded once, but a deletion meanwhile can shift another out of view."""
        seen: set[int] = set()
        result = first
        for page in itertools.count(2):
            for file in result.files:
                if file.file_id not in seen:
                    seen.add(file.file_id)
                    yield file
            if len(result.files) < limit or page > result.pagination.pages:
                return
            _, data = await self._page(page=page, limit=limit, **query)
            result = FileList.from_json(data)

    async def get(
        self,
        file_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> FileRecord:
        """One file's record."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", c.id_path("files", file_id))
        return FileRecord.from_json(member(data, "file", "file object"))

    async def update(
        self,
        file_id: int | str,
        *,
        expires_in: c.Seconds | c.Unset = c.UNSET,
        expires_at: c.Instant | None | c.Unset = c.UNSET,
        filename: str | c.Unset = c.UNSET,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> FileRecord:
        """Changes a file's expiry or name; arguments left out stay as they are.

        ``expires_in`` (seconds or a timedelta from now) or ``expires_at`` (an aware datetime or a
        UTC ``YYYY-MM-DD HH:MM:SS`` string), not both; ``expires_at=None`` removes the expiry."""
        body = c.json_body({"expires_in": expires_in, "expires_at": expires_at, "filename": filename}, none_clears=True)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("PATCH", c.id_path("files", file_id), body)
        return FileRecord.from_json(member(data, "file", "file object"))

    async def delete(
        self,
        file_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        """Deletes a file; its links stop working at once."""
        await self._client._for_call(timeout, max_retries, extra_headers)._call("DELETE", c.id_path("files", file_id))

    async def delete_many(
        self,
        file_ids: Iterable[int | str],
        *,
        idempotency_key: str | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> BulkDeleteResult:
        """Deletes several files in one call (``POST /files/delete``, scope ``files:delete``).

        1 to 100 distinct ids, each deleted as :meth:`delete` deletes one (wholly or not at all, with
        its audit row and webhook event). Answers which were deleted and which name none of your files,
        each in the order given. Every attempt carries one ``Idempotency-Key`` (``idempotency_key``,
        else a new UUID): a retry after a lost answer gets the first answer back."""
        body = c.json_body({"ids": _archive.archive_ids(file_ids, what="delete_many", most=MAX_BULK_DELETE)}, none_clears=False)
        key = c.idempotency_headers(idempotency_key)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", "/files/delete", body, headers=key)
        return BulkDeleteResult.from_json(data if isinstance(data, dict) else {})

    async def download_archive(
        self,
        file_ids: Iterable[int | str],
        destination: Destination,
        *,
        on_progress: c.ProgressCallback | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> ArchiveResult:
        """Downloads several files as one ZIP (``POST /files/archive``) to a path or a binary file
        object. The key needs both ``files:read`` and ``links:write`` (a key that can list files and
        make public links can fetch their bytes anyway); one without ``links:write`` raises
        :class:`InsufficientScopeError` naming it.

        One entry per id, in the order given, stored uncompressed, names made safe and unique
        (``a.txt``, ``a (2).txt``); 1 to 1000 distinct ids. An id that is not yours, or does not
        exist, raises :class:`NotFoundError` before any byte. Nothing counts as a download. A
        connection lost mid-archive starts it again from the first byte (a path; at most
        ``max_retries`` times in all, since nothing resumes) or raises; a path that did not get the
        whole archive is removed. ``on_progress(bytes_received, archive_bytes)``."""
        client = self._client._for_call(timeout, max_retries, extra_headers)
        return await _archive.download_archive(client, file_ids, destination, on_progress=on_progress)


_DELETE, _KEEP, _KEEP_UNLESS_REFUSED = "delete", "keep", "keep unless refused"
"""What becomes of a resumable upload that failed."""


class _Digest:
    """The SHA-256 of the bytes one upload attempt read from its source, and whether it read them all."""

    def __init__(self) -> None:
        self.hasher = hashlib.sha256()
        self.complete = False


async def _sha256_of(source: UploadSource) -> str:
    hasher = hashlib.sha256()
    async for chunk in source.aiter_chunks():
        await _io.update_hash(hasher, chunk)
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
