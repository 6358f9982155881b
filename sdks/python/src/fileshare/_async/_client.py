"""The client: configuration, HTTP, retries, and the calls on the account. Written once in _async/;
scripts/unasync.py derives the blocking twin in _sync/."""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from .. import _common as c
from .._errors import APIConnectionError, ConfigurationError, FileshareError, error_from_response
from .._records import DownloadResult, StatsResult
from . import _download, _io
from ._download import Destination, FileOrLink
from ._files import AsyncFiles
from ._links import AsyncLinks

T = TypeVar("T")


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
        return await _download.download(self, file_or_link, destination, password=password, on_progress=on_progress, resume=resume)
