"""``client.download()``: a link's grant, then the bytes, resumed with ``Range`` + ``If-Range``."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any, Union

import httpx

from .. import _common as c
from .._errors import APIConnectionError, ConfigurationError, FileshareError, IntegrityError, NotFoundError, error_from_response
from .._records import DownloadResult, FileRecord, Link
from . import _io

if TYPE_CHECKING:
    from ._client import AsyncClient

FileOrLink = Union[FileRecord, Link, Mapping[str, Any], str]
"""A file record (its ``public_link``, ``sha256`` and ``size`` are used), a link record, or a link."""
Destination = Union[str, "os.PathLike[str]", IO[bytes]]
"""Where a download goes: a path, or a binary file object opened for writing."""


async def download(
    client: AsyncClient,
    file_or_link: FileOrLink,
    destination: Destination,
    *,
    password: str | None = None,
    on_progress: c.ProgressCallback | None = None,
    resume: bool = True,
) -> DownloadResult:
    """``client.download()`` (documented there)."""
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
                grant = await _grant(client, link, password)
                head, _ = await client._request("HEAD", grant, headers={"accept": "*/*"}, auth=False)
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
                        client._grants.forget(link)
                        return DownloadResult(size=offset, sha256=expected, resumed_from=resumed_from)
                    offset = resumed_from = 0  # complete length but other bytes: start again
                    hasher = hashlib.sha256()
        if grant is None:
            grant = await _grant(client, link, password)
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
                response = await client._send("GET", grant, headers=headers, auth=False, stream=True)
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
                                raise c.response_error(
                                    response, "the server restarted the download from byte 0, which a file object destination cannot take"
                                )
                            await sink.restart()
                            offset = resumed_from = 0
                            hasher = hashlib.sha256()
                    else:
                        content_range = response.headers.get("content-range", "")
                        match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", content_range)
                        if not match or int(match.group(1)) != offset:
                            raise c.response_error(response, f"unexpected Content-Range {content_range!r} for a download from byte {offset}")
                        total = int(match.group(3))
                    if on_progress:
                        on_progress(offset, total)
                    async for chunk in response.aiter_bytes():
                        await _io.update_hash(hasher, chunk)
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
                if not c.is_retryable(error) or failures >= client.max_retries or not can_resume:
                    raise
                delay = c.retry_delay(failures, error, client._random)
                c.log_retry(failures, client.max_retries, delay, error)
                await client._sleep(delay)
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
        client._grants.forget(link)
        return DownloadResult(size=offset, sha256=actual, resumed_from=resumed_from)
    except BaseException as error:
        await sink.close(False)
        if grant is not None:
            # A grant that answers 404 died with its link; any other grant may resume this download.
            if isinstance(error, NotFoundError):
                client._grants.forget(link)
            else:
                client._grants.keep(link, grant)
        raise

async def _grant(client: AsyncClient, link: str, password: str | None) -> str:
    """A grant URL for ``link``: one kept from a download of it that did not finish, else a new
    one (``POST`` to the link, which counts one download: sent again only after a 429 or 503)."""
    kept = client._grants.get(link)
    if kept is not None:
        return kept
    if password is None:
        headers: dict[str, str] = {}
        body = b""
    else:
        headers = {"content-type": "application/json"}
        body = c.json_body({"password": password}, none_clears=False)

    async def attempt() -> str:
        response = await client._send("POST", link, headers=headers, content=body, auth=False, follow_redirects=False)
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.headers, response.content)
        return c.grant_url(response, link)

    return await client._retrying(attempt, c.is_retryable_answer)

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
                await _io.update_hash(hasher, chunk)
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

