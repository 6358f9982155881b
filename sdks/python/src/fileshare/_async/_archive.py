"""``client.files.download_archive()``: several files as one ZIP (``POST /files/archive``), streamed.

The server makes the archive as it sends it, so there is no ``Range`` to continue one: a connection
lost before the first byte is retried, one lost later starts the archive again where the destination
can be rewritten (a path), and a path this call wrote to that did not get the whole archive is
removed, so that a broken ZIP is never left where a finished one is expected."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import httpx

from .. import _common as c
from .._errors import APIConnectionError, ConfigurationError, FileshareError, error_from_response
from .._records import ArchiveResult
from . import _io
from ._download import Destination, _Sink

if TYPE_CHECKING:
    from ._client import AsyncClient

MAX_ARCHIVE_FILES = 1000
"""The most files one archive may hold (the server's limit)."""


def archive_ids(ids: Iterable[int | str], *, what: str = "download_archive", most: int = MAX_ARCHIVE_FILES) -> list[int]:
    """The ids as the API takes them; a clear :class:`ConfigurationError` before any request otherwise."""
    if isinstance(ids, (str, bytes)):
        raise ConfigurationError(f"{what} takes a list of file ids, not one string")
    result: list[int] = []
    for value in ids:
        if isinstance(value, bool) or not (
            (isinstance(value, int) and value >= 1) or (isinstance(value, str) and re.fullmatch(r"[1-9][0-9]*", value))
        ):
            raise ConfigurationError(f"not a file id: {value!r}")
        result.append(int(value))
    if not result:
        raise ConfigurationError(f"{what} needs at least one file id")
    if len(result) > most:
        raise ConfigurationError(f"{what} takes at most {most} file ids")
    return result


def _disposition_filename(header: str | None) -> str | None:
    match = re.search(r'filename="([^"]*)"', header or "")
    return match.group(1) if match else None


async def download_archive(
    client: AsyncClient,
    ids: Iterable[int | str],
    destination: Destination,
    *,
    on_progress: c.ProgressCallback | None = None,
) -> ArchiveResult:
    """``client.files.download_archive()`` (documented there)."""
    body = c.json_body({"ids": archive_ids(ids)}, none_clears=False)
    sink = _Sink(destination)
    received = 0
    failures = 0
    wrote = False  # whether this call wrote to a path (which truncated it): only then is it removed on failure
    try:
        while True:
            try:
                response = await client._send(
                    "POST",
                    client._url("/files/archive"),
                    headers={"content-type": "application/json", "accept": "application/zip, application/json", "accept-encoding": "identity"},
                    content=body,
                    stream=True,
                )
                try:
                    if response.status_code != 200:
                        raise error_from_response(response.status_code, response.headers, await response.aread())
                    if received > 0:
                        # A second attempt after bytes were written: only a path can take the archive again.
                        await sink.restart()
                        received = 0
                    total = c.int_header(response, "content-length")
                    if on_progress:
                        on_progress(0, total)
                    async for chunk in response.aiter_bytes():
                        wrote = True
                        await sink.write(chunk)
                        received += len(chunk)
                        if on_progress:
                            on_progress(received, total)
                except httpx.TransportError as exc:
                    raise c.connection_error(exc) from exc
                finally:
                    await response.aclose()
                # The server cuts the connection when a stored file fails mid-archive: never a short ZIP taken as whole.
                if total is not None and received != total:
                    raise APIConnectionError(f"the connection ended after {received} of {total} bytes")
                await sink.close(True)
                return ArchiveResult(size=received, filename=_disposition_filename(response.headers.get("content-disposition")))
            except FileshareError as error:
                # The budget is never given back: an archive does not resume, so every attempt downloads it from
                # its first byte, and a store that cuts each attempt near the same offset must not buy more of them.
                can_retry = received == 0 or sink.can_restart
                if not c.is_retryable(error) or failures >= client.max_retries or not can_retry:
                    raise
                delay = c.retry_delay(failures, error, client._random)
                c.log_retry(failures, client.max_retries, delay, error)
                await client._sleep(delay)
                failures += 1
    except BaseException:
        await sink.close(False)
        if sink.path is not None and wrote:
            with contextlib.suppress(OSError):
                await _io.run(os.remove, sink.path)
        raise
