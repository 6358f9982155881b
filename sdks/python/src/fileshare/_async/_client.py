"""The client: configuration, HTTP, retries, and the calls on the account. Written once in _async/;
scripts/unasync.py derives the blocking twin in _sync/."""

from __future__ import annotations

import copy
import itertools
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from .. import _common as c
from .._errors import APIConnectionError, ConfigurationError, FileshareError, error_from_response
from .._logs import logger, setup_logging
from .._records import CurrentKey, DownloadResult, StatsResult
from . import _download, _io
from ._audit_events import AsyncAuditEvents
from ._download import Destination, FileOrLink
from ._files import AsyncFiles
from ._links import AsyncLinks
from ._raw import AsyncClientWithRawResponse
from ._upload_requests import AsyncUploadRequests
from ._webhook_endpoints import AsyncWebhookEndpoints

T = TypeVar("T")


class AsyncClient:
    """The Fileshare API client. Use it as a context manager, or call ``close()``.

    ``base_url`` (ends in ``/api/v1``) and ``api_key`` default to ``FILESHARE_BASE_URL`` and
    ``FILESHARE_API_KEY``. ``timeout`` (seconds, or an ``httpx.Timeout``) bounds connecting and
    every stretch without a byte sent or received, never a whole transfer. ``default_headers`` go
    with every request. The key never shows in ``repr``, messages or logs.

    Every call also takes ``timeout=``, ``max_retries=`` and ``extra_headers=`` for itself alone;
    ``with_options(...)`` gives a copy with other settings that shares the connection pool, and
    ``with_raw_response.<call>(...)`` answers a :class:`~fileshare.RawResponse` (status, headers).
    """

    files: AsyncFiles
    """Upload, list, iterate, get, update, delete."""
    links: AsyncLinks
    """A file's links: create, list, get, update, delete, rotate."""
    audit_events: AsyncAuditEvents
    """The account's audit log: list, iterate (scope ``audit:read``)."""
    webhooks: AsyncWebhookEndpoints
    """Webhook endpoints: create, list, get, update, delete, rotate_secret, test, deliveries,
    iterate_deliveries, retry_delivery (scope ``webhooks:manage``). Verify the messages with
    :class:`fileshare.Webhooks`."""
    upload_requests: AsyncUploadRequests
    """Upload requests (links at which guests send files into the account): create, list, get,
    update, delete, close, files, iterate_files (scope ``requests:manage``)."""
    base_url: str
    max_retries: int
    timeout: c.Timeout
    resumable_threshold: int
    chunk_size: int
    default_headers: Mapping[str, str]
    _grants: c.Grants

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        max_retries: int = c.DEFAULT_MAX_RETRIES,
        timeout: c.Timeout = c.DEFAULT_TIMEOUT,
        resumable_threshold: int = c.DEFAULT_RESUMABLE_THRESHOLD,
        chunk_size: int = c.DEFAULT_CHUNK_SIZE,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        setup_logging()
        if http_client is not None and transport is not None:
            raise ConfigurationError("pass http_client= or transport=, not both")
        if http_client is not None and timeout == c.DEFAULT_TIMEOUT:
            timeout = http_client.timeout  # the pool's own timeout, unless one is given
        self._configure(*c.resolve_config(base_url, api_key, max_retries, timeout, resumable_threshold, chunk_size))
        self.timeout = timeout
        self.default_headers = c.check_headers(default_headers, "default_headers")
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=self._timeout, transport=transport)
        self._sleep: Callable[[float], Awaitable[None]] = _io.sleep
        self._random: Callable[[], float] = random.random
        self._tus: dict[str, c.TusCapabilities] = {}
        self._grants = c.Grants()

    def _configure(self, config: c.Config, key: str) -> None:
        self.base_url = config.base_url
        self.max_retries = config.max_retries
        self._timeout = config.timeout
        self.resumable_threshold = config.resumable_threshold
        self.chunk_size = config.chunk_size
        self.__api_key = key
        self.files = AsyncFiles(self)
        self.links = AsyncLinks(self)
        self.audit_events = AsyncAuditEvents(self)
        self.webhooks = AsyncWebhookEndpoints(self)
        self.upload_requests = AsyncUploadRequests(self)

    def with_options(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        default_headers: Mapping[str, str] | None = None,
        resumable_threshold: int | None = None,
        chunk_size: int | None = None,
    ) -> AsyncClient:
        """A copy of this client with the settings given changed (``default_headers`` are added to
        this client's). It shares the connection pool: close the first client, not the copies.

            await client.with_options(timeout=5, max_retries=0).files.get(7)
        """
        config, key = c.resolve_config(
            base_url or self.base_url,
            api_key or self.__api_key,
            self.max_retries if max_retries is None else max_retries,
            self._timeout if isinstance(timeout, c.Unset) else timeout,
            self.resumable_threshold if resumable_threshold is None else resumable_threshold,
            self.chunk_size if chunk_size is None else chunk_size,
        )
        other = copy.copy(self)
        other._configure(config, key)
        if not isinstance(timeout, c.Unset):
            other.timeout = timeout
        other.default_headers = {**self.default_headers, **c.check_headers(default_headers, "default_headers")}
        other._owns_http = False
        return other

    def _for_call(self, timeout: c.Timeout | c.Unset, max_retries: int | None, extra_headers: Mapping[str, str] | None) -> AsyncClient:
        """This client, or a copy with one call's own options."""
        if isinstance(timeout, c.Unset) and max_retries is None and not extra_headers:
            return self
        return self.with_options(timeout=timeout, max_retries=max_retries, default_headers=extra_headers)

    @property
    def with_raw_response(self) -> AsyncClientWithRawResponse:
        """The same calls, answering a :class:`~fileshare.RawResponse`: the HTTP status and headers
        of the call's answer (``RateLimit-Remaining`` among them), and ``parse()`` for the result.

            raw = await client.with_raw_response.files.get(7)
            print(raw.headers["ratelimit-remaining"], raw.parse().filename)
        """
        return AsyncClientWithRawResponse(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key='[redacted]')"

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the connection pool (not an ``http_client`` you passed in, nor from a copy)."""
        if self._owns_http:
            await self._http.aclose()

    # -- HTTP ----------------------------------------------------------------------------------

    def _url(self, path: str, query: Mapping[str, c.QueryValue] | None = None) -> str:
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
        """One attempt; any status. Transport failures become APIConnectionError (APITimeoutError)."""
        request = self._http.build_request(
            method,
            url,
            headers=c.headers(self.__api_key if auth else None, headers, self.default_headers),
            content=content,
            timeout=httpx.Timeout(timeout) if timeout is not None else self._timeout,
        )
        logger.debug("request: %s %s", method, url)
        started = time.monotonic()
        try:
            if follow_redirects is None:
                response = await self._http.send(request, stream=stream)
            else:
                response = await self._http.send(request, stream=stream, follow_redirects=follow_redirects)
        except httpx.TransportError as exc:
            error = c.connection_error(exc)
            logger.debug("no answer: %s %s: %s", method, url, error)
            raise error from exc
        c.answered(response, started)
        return response

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
            raise c.response_error(response, f"{response.status_code}: the answer is not JSON") from None

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
                delay = c.retry_delay(number, error, self._random)
                c.log_retry(number, self.max_retries, delay, error)
                await self._sleep(delay)
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
        known = self._tus.get(self.base_url)
        if known is None:
            try:
                response = await self._send("OPTIONS", self._url("/uploads"), auth=False)
            except APIConnectionError:
                return c.TusCapabilities(available=False, checksum_sha256=False, max_size=None)
            known = self._tus[self.base_url] = c.tus_capabilities(response)
        return known

    # -- calls ---------------------------------------------------------------------------------

    async def stats(
        self,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> StatsResult:
        """The account's statistics, limits and plan (fields this SDK does not know are kept)."""
        client = self._for_call(timeout, max_retries, extra_headers)
        _, data = await client._request("GET", client._url("/stats"))
        return StatsResult.from_json(data)

    async def key(
        self,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> CurrentKey:
        """The API key this client calls with (``GET /key``): its scopes, the addresses it may call
        from, its dates, and the account's plan. Any valid key may ask (no scope needed); it counts
        against the rate limits."""
        client = self._for_call(timeout, max_retries, extra_headers)
        _, data = await client._request("GET", client._url("/key"))
        return CurrentKey.from_json(data)

    async def download(
        self,
        file_or_link: FileOrLink,
        destination: Destination,
        *,
        password: str | None = None,
        on_progress: c.ProgressCallback | None = None,
        resume: bool = True,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> DownloadResult:
        """Downloads a file (its record, a link record or a link) to a path or a binary file object.

        The link is asked for a grant first (``POST``, with ``password`` when the link has one; it
        counts one download), then the grant URL is downloaded; the grant counts nothing more, so a
        resume within the call, or a later call of this client for the same link within 50 minutes,
        continues for free. With ``resume`` (default True) a partial destination file is continued
        with ``Range`` + ``If-Range``; a connection that drops is continued the same way within the
        retry budget. The finished bytes are checked against the ``ETag`` (the file's SHA-256).

        On a server that serves only files scanned for viruses, the link of a file not scanned yet
        answers 409 ``scan_pending`` with ``Retry-After``: the download waits that long and asks
        again within the retry budget, then raises :class:`ScanPendingError` (with ``retry_after``). A file the scanner could not scan raises
        :class:`LimitExceededError` (``file_not_scannable``); an infected file's links answer 404
        (:class:`NotFoundError`).
        """
        client = self._for_call(timeout, max_retries, extra_headers)
        return await _download.download(client, file_or_link, destination, password=password, on_progress=on_progress, resume=resume)
