"""What the sync and the async client share: configuration, URLs, retry timing, framing."""

from __future__ import annotations

import base64
import enum
import json
import logging
import os
import re
import secrets
import time
import uuid
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import IO, Any, Callable, Final, Literal, Mapping, Sequence
from urllib.parse import urlencode

import httpx

from ._errors import (
    APIConnectionError,
    APITimeoutError,
    BadRequestError,
    ConfigurationError,
    FileshareError,
    RateLimitError,
    ScanPendingError,
    ServerError,
)
from ._logs import logger
from ._records import FileRecord, Link
from ._version import USER_AGENT

DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = 60.0
DEFAULT_RESUMABLE_THRESHOLD = 64 * 1024 * 1024
DEFAULT_CHUNK_SIZE = 16 * 1024 * 1024
RETRY_AFTER_MAX = 60
"""A ``Retry-After`` of more seconds than this is not waited for: the call raises at once."""
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
CONFLICTS_TO_RETRY = frozenset({"idempotency_in_progress", "scan_pending"})
"""The codes of the 409s that are retried: the same request succeeds once the other one ended, or
once the server scanned the file for viruses (it sends ``Retry-After``)."""
BACKOFF_BASE = 0.5
"""First backoff step (full jitter: a random wait between 0 and this, doubling per attempt)."""
BACKOFF_MAX = 8.0
SLICE = 256 * 1024
"""Bytes per write of a request body (progress is reported at this granularity)."""
READ_SIZE = 1024 * 1024
"""Bytes per read from an upload source."""
TUS_HEADERS = {"tus-resumable": "1.0.0"}
GRANT_REUSE = 50 * 60.0
"""Seconds a grant URL is reused to resume a download of its link (the server honours it for an hour)."""

ProgressCallback = Callable[[int, "int | None"], Any]
"""``on_progress(bytes_done, total_bytes)``; ``total_bytes`` is None for a stream of unknown length."""


@dataclass(frozen=True, slots=True)
class Config:
    base_url: str
    max_retries: int
    timeout: httpx.Timeout
    resumable_threshold: int
    chunk_size: int


Timeout = float | httpx.Timeout | None
"""Seconds (connect, and every stretch without a byte sent or received), an ``httpx.Timeout`` for
each phase apart, or None: no timeout."""


def _non_negative(value: int, name: str, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        raise ConfigurationError(f"{name} must be a {'positive' if positive else 'non-negative'} integer")
    return value


def to_timeout(timeout: Timeout) -> httpx.Timeout:
    if isinstance(timeout, httpx.Timeout):
        return timeout
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ConfigurationError("timeout must be a positive number of seconds, an httpx.Timeout, or None for no timeout")
    return httpx.Timeout(None if timeout is None else float(timeout))


def check_base_url(base_url: str) -> str:
    """The base URL without a trailing slash, once it is an http(s) URL that ends in ``/api/v1``."""
    if not re.match(r"^https?://[^/]+", base_url):
        raise ConfigurationError(f"base_url must be an http(s) URL ending in /api/v1, got {base_url[:80]!r}")
    trimmed = base_url.rstrip("/")
    if not trimmed.endswith("/api/v1"):
        raise ConfigurationError(
            f"base_url must end in /api/v1 (the API's root): add /api/v1, as in {trimmed[:80] + '/api/v1'!r}"
        )
    return trimmed


def resolve_config(
    base_url: str | None,
    api_key: str | None,
    max_retries: int,
    timeout: Timeout,
    resumable_threshold: int,
    chunk_size: int,
) -> tuple[Config, str]:
    """Checks the settings (falling back on the environment); returns them and the key apart."""
    base_url = base_url or os.environ.get("FILESHARE_BASE_URL") or None
    api_key = api_key or os.environ.get("FILESHARE_API_KEY") or None
    if not base_url:
        raise ConfigurationError(
            'no base URL: pass base_url= (e.g. "https://files.example.com/api/v1") or set FILESHARE_BASE_URL'
        )
    checked = check_base_url(base_url)
    if not api_key:
        raise ConfigurationError("no API key: pass api_key= or set FILESHARE_API_KEY")
    config = Config(
        base_url=checked,
        max_retries=_non_negative(max_retries, "max_retries"),
        timeout=to_timeout(timeout),
        resumable_threshold=_non_negative(resumable_threshold, "resumable_threshold"),
        chunk_size=_non_negative(chunk_size, "chunk_size", positive=True),
    )
    return config, api_key


def check_headers(value: Mapping[str, str] | None, name: str) -> dict[str, str]:
    """Extra headers of the caller's, with lower-case names; the key cannot be set this way."""
    result: dict[str, str] = {}
    for key, header in (value or {}).items():
        if not isinstance(key, str) or not isinstance(header, str):
            raise ConfigurationError(f"{name} maps header names to strings")
        if key.lower() == "authorization":
            raise ConfigurationError(f"{name} cannot set Authorization: pass api_key=")
        result[key.lower()] = header
    return result


QueryValue = int | str | Sequence[str] | None
"""A query parameter's value: ``None`` leaves it out; a list or tuple sends the name once per value."""


def url(base_url: str, path: str, query: Mapping[str, QueryValue] | None = None) -> str:
    result = base_url + path
    params: list[tuple[str, str]] = []
    for name, value in (query or {}).items():
        if isinstance(value, (int, str)):
            params.append((name, str(value)))
        elif value is not None:
            params.extend((name, each) for each in value)
    return f"{result}?{urlencode(params)}" if params else result


def headers(
    api_key: str | None, extra: Mapping[str, str] | None = None, custom: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A request's headers: the SDK's defaults, the caller's ``custom`` ones (client and call), the
    request's own ``extra`` ones, and the key."""
    result = {"user-agent": USER_AGENT, "accept": "application/json"}
    if custom:
        result.update(custom)
    if extra:
        result.update({k.lower(): v for k, v in extra.items()})
    if api_key is not None:
        result["authorization"] = f"Bearer {api_key}"
    return result


def id_path(collection: str, value: int | str) -> str:
    """``/files/7`` or ``/links/12``, once the id is known to be a positive integer."""
    text = str(value)
    if isinstance(value, bool) or not re.fullmatch(r"[1-9][0-9]*", text):
        singular = {"deliveries": "delivery", "upload-requests": "upload request"}.get(collection, collection.removesuffix("s"))
        raise ConfigurationError(f"a {singular} id is a positive integer, got {text[:40]!r}")
    return f"/{collection}/{text}"


def waits_too_long(error: BaseException) -> bool:
    """The server asked for a wait (``Retry-After``) longer than ``RETRY_AFTER_MAX``: no retry sleeps through it."""
    return isinstance(error, FileshareError) and error.retry_after is not None and error.retry_after > RETRY_AFTER_MAX


def is_transient(error: BaseException) -> bool:
    """429, 500, 502, 503, 504, 409 ``idempotency_in_progress``, 409 ``scan_pending`` (a link of
    a file not scanned for viruses yet) and connection failures: the same request may succeed later."""
    if isinstance(error, APIConnectionError):
        return True
    if isinstance(error, BadRequestError):
        return error.status == 409 and error.code in CONFLICTS_TO_RETRY
    return isinstance(error, (RateLimitError, ServerError)) and error.status in RETRYABLE_STATUSES


def is_retryable(error: BaseException) -> bool:
    """A transient failure is worth another attempt now, unless the server asked for a wait of
    more than a minute; nothing else is."""
    return is_transient(error) and not waits_too_long(error)


def is_final(error: BaseException) -> bool:
    """The server (or the SDK's checks) refused the request for good: an error of the SDK that is
    not transient. A cancellation or an error of the caller's own source is not."""
    return isinstance(error, FileshareError) and not is_transient(error)


def is_retryable_answer(error: BaseException) -> bool:
    """For a POST without an idempotency key that must not take effect twice (a download's grant, a
    rotation): only an answer that says nothing was done (429, 503) and asks for at most
    ``RETRY_AFTER_MAX`` seconds. After a connection failure or another 5xx the server may have
    acted, so it is not sent again."""
    if waits_too_long(error):
        return False
    if isinstance(error, ScanPendingError):
        return True  # refused before the link counted anything
    return isinstance(error, RateLimitError) or (isinstance(error, ServerError) and error.status == 503)


def never(error: BaseException) -> bool:
    return False


class Unset(enum.Enum):
    """The type of :data:`UNSET`."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""An argument left out of an update: the field stays as it is (``None`` is a value: it clears the field)."""

Seconds = int | timedelta
"""A duration: whole seconds, or a :class:`~datetime.timedelta`."""
Instant = str | datetime
"""A moment: an aware :class:`~datetime.datetime`, or a UTC ``YYYY-MM-DD HH:MM:SS`` string."""


def seconds(value: Seconds, name: str) -> int:
    if isinstance(value, timedelta):
        return int(value.total_seconds())
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"{name} is a number of seconds (an int) or a timedelta, got {type(value).__name__}")
    return value


def api_time(value: Instant, name: str) -> str:
    """An instant as the API writes it: UTC ``YYYY-MM-DD HH:MM:SS``."""
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            raise ConfigurationError(
                f"{name} needs an aware datetime (e.g. datetime.now(timezone.utc) + timedelta(days=7)), not a naive one"
            )
        return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    if not isinstance(value, str):
        raise ConfigurationError(f"{name} is a datetime or a UTC 'YYYY-MM-DD HH:MM:SS' string, got {type(value).__name__}")
    return value


Since = str | date | datetime
"""The start of a time filter: an aware :class:`~datetime.datetime` (sent in UTC), a
:class:`~datetime.date` (that day from 00:00 UTC), or a string as the API takes it (UTC
``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SSZ``)."""


def since_param(value: Since, name: str = "since") -> str:
    """A ``since`` filter as the API takes it: ``YYYY-MM-DDTHH:MM:SSZ`` (UTC) or ``YYYY-MM-DD``."""
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            raise ConfigurationError(
                f"{name} needs an aware datetime (e.g. datetime.now(timezone.utc) - timedelta(days=1)), not a naive one"
            )
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        raise ConfigurationError(f"{name} is a datetime, a date or a UTC string, got {type(value).__name__}")
    return value


def json_body(fields: Mapping[str, Any], *, none_clears: bool) -> bytes:
    """The JSON body of a create or update call. Arguments left out (``UNSET``) are not sent; ``None``
    is sent as ``null`` when ``none_clears`` (an update), else left out too; durations and instants
    are written as the API takes them."""
    body: dict[str, Any] = {}
    for name, value in fields.items():
        if value is UNSET or (value is None and not none_clears):
            continue
        if name in ("expires_in", "file_expires_in") and value is not None:
            value = seconds(value, name)
        elif name == "expires_at" and value is not None:
            value = api_time(value, name)
        body[name] = value
    return json.dumps(body).encode("utf-8")


IDEMPOTENCY_KEY_MAX = 255


def idempotency_headers(key: str | None) -> dict[str, str]:
    """The ``Idempotency-Key`` of one creating call: the caller's, else a new UUID v4. Every attempt
    of the call sends the same one, so the server replays its first answer instead of acting twice."""
    if key is None:
        key = str(uuid.uuid4())
    elif not isinstance(key, str) or not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX or not all(" " <= ch <= "~" for ch in key):
        raise ConfigurationError(f"idempotency_key must be 1 to {IDEMPOTENCY_KEY_MAX} printable ASCII characters")
    return {"idempotency-key": key}


def expiry_headers(expires_in: Seconds | None) -> dict[str, str]:
    """``Fileshare-Expires-In`` of an upload, when it is to expire."""
    return {} if expires_in is None else {"fileshare-expires-in": str(seconds(expires_in, "expires_in"))}


def download_target(file_or_link: Any) -> tuple[str, str | None, int | None]:
    """The link to download, and the SHA-256 and size to expect where the record tells them."""
    expected: str | None = None
    total: int | None = None
    if isinstance(file_or_link, str):
        link = file_or_link
    elif isinstance(file_or_link, FileRecord):
        link, expected, total = file_or_link.public_link, file_or_link.sha256.lower(), file_or_link.size
    elif isinstance(file_or_link, Link):
        link = file_or_link.url
    elif isinstance(file_or_link, Mapping) and isinstance(file_or_link.get("public_link"), str):
        link = file_or_link["public_link"]
        sha = file_or_link.get("sha256")
        expected = sha.lower() if isinstance(sha, str) else None
        size = file_or_link.get("size")
        total = size if isinstance(size, int) else None
    else:
        raise ConfigurationError("download needs a file record, a link record or a link")
    if not re.match(r"^https?://", link):
        raise ConfigurationError("download needs a file record, a link record or a link (an http(s) URL)")
    return link, expected, total


def grant_url(response: httpx.Response, link: str) -> str:
    """The grant URL of a ``POST /download/<token>`` answer: its ``Location`` (a 303), else the
    JSON body's ``download_url``; relative to the link if it is relative."""
    location = response.headers.get("location")
    if not location:
        try:
            data = response.json()
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("download_url"), str):
            location = data["download_url"]
    if not location:
        raise response_error(response, f"{response.status_code}: the link gave no download URL (no Location)")
    grant = str(httpx.URL(link).join(location))
    if not re.match(r"^https?://", grant):
        raise FileshareError(f"the link gave a download URL that is not http(s): {grant[:80]!r}")
    return grant


class Grants:
    """Grant URLs of downloads that did not finish, by link: downloading the same link again with the
    same client resumes through its grant, which counts nothing (the server honours a grant for an
    hour; it is reused for ``GRANT_REUSE`` seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._by_link: dict[str, tuple[str, float]] = {}

    def get(self, link: str) -> str | None:
        kept = self._by_link.get(link)
        if kept is None or kept[1] <= self._clock():
            return None
        return kept[0]

    def keep(self, link: str, grant: str) -> None:
        now = self._clock()
        for old in [k for k, (_, until) in self._by_link.items() if until <= now]:
            self._by_link.pop(old, None)
        if link not in self._by_link or self._by_link[link][0] != grant:
            self._by_link[link] = (grant, now + GRANT_REUSE)

    def forget(self, link: str) -> None:
        self._by_link.pop(link, None)


def is_tus_resumable(error: BaseException) -> bool:
    """A chunk that failed like this is resumed where the server stands (HEAD)."""
    if is_retryable(error):
        return True
    return isinstance(error, BadRequestError) and error.status in (409, 423, 460) and not waits_too_long(error)


def retry_delay(attempt: int, error: BaseException, random: Callable[[], float]) -> float:
    """Seconds before retry number ``attempt`` (0 first): ``Retry-After`` (the retry predicates let
    none over ``RETRY_AFTER_MAX`` through), else full jitter."""
    if isinstance(error, FileshareError) and error.retry_after is not None:
        return min(float(error.retry_after), float(RETRY_AFTER_MAX))
    ceiling = min(BACKOFF_MAX, BACKOFF_BASE * 2.0**attempt)
    return random() * ceiling


def connection_error(exc: httpx.TransportError) -> APIConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"timed out: {type(exc).__name__} (no data moved within timeout)")
    detail = str(exc) or type(exc).__name__
    return APIConnectionError(f"connection failed: {detail}")


def etag_sha256(etag: str | None) -> str | None:
    if not etag:
        return None
    match = re.fullmatch(r'(?:W/)?"([0-9a-fA-F]{64})"', etag.strip())
    return match.group(1).lower() if match else None


def check_sha256(file_id: int, expected: str, actual: str, *, replayed: bool = False) -> None:
    from ._errors import IntegrityError

    if expected != actual:
        hint = " (the answer was replayed for the idempotency key, first used for other bytes)" if replayed else ""
        raise IntegrityError(
            f"the server stored file {file_id} with SHA-256 {expected}, but the bytes sent hash to {actual}{hint}",
            expected=expected,
            actual=actual,
        )


def is_replay(response: httpx.Response) -> bool:
    """The server replayed the stored answer of the request's idempotency key (nothing new was done)."""
    value: str = response.headers.get("idempotent-replayed", "")
    return value.strip().lower() == "true"


FileSort = Literal["upload_date", "filename", "size", "download_count"]
"""What ``files.list`` and ``files.iterate`` order by (``sort``): upload time (the default), name
(ignoring case), size or download count; ties by ``file_id`` in the same direction."""

SortOrder = Literal["asc", "desc"]
"""The direction of a sort (``order``): ``"desc"`` (the default: newest, largest, Z first) or ``"asc"``."""

FileState = Literal["expiring", "expired_links", "from_upload_request"]
"""What ``files.list`` and ``files.iterate`` filter by (``state``): ``"expiring"`` (the file has an
expiry), ``"expired_links"`` (one of its links expired or used up its downloads; revoked ones do not
count), ``"from_upload_request"`` (a guest brought it through an upload request)."""


def by_upload_date(sort: QueryValue) -> bool:
    """A file list in upload order (either direction): the orders that page by ``before_id``."""
    return sort is None or sort == "upload_date"


def pages_by_before_id(data: Any) -> bool:
    """The list answer names ``pagination.next_before_id`` (null included): the server pages by
    ``before_id``. A server before it gives only page numbers."""
    pagination = data.get("pagination") if isinstance(data, Mapping) else None
    return isinstance(pagination, Mapping) and "next_before_id" in pagination


def tus_metadata(filename: str, content_type: str | None) -> str:
    def encode(value: str) -> str:
        return base64.b64encode(value.encode("utf-8")).decode("ascii")

    pairs = [f"filename {encode(filename)}"]
    if content_type:
        pairs.append(f"filetype {encode(content_type)}")
    return ",".join(pairs)


@dataclass(frozen=True, slots=True)
class TusCapabilities:
    """What ``OPTIONS /uploads`` said."""

    available: bool
    checksum_sha256: bool
    max_size: int | None


def tus_capabilities(response: httpx.Response) -> TusCapabilities:
    def listed(name: str) -> list[str]:
        return [v.strip() for v in response.headers.get(name, "").split(",")]

    max_size = response.headers.get("tus-max-size", "")
    return TusCapabilities(
        available=response.status_code < 300 and "1.0.0" in listed("tus-version") and "creation" in listed("tus-extension"),
        checksum_sha256="checksum" in listed("tus-extension") and "sha256" in listed("tus-checksum-algorithm"),
        max_size=int(max_size) if max_size.isdigit() else None,
    )


def form_filename(name: str) -> str:
    """A file name as the HTML standard's form encoding writes it in a ``Content-Disposition``."""
    return name.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


@dataclass(frozen=True, slots=True)
class MultipartFrame:
    content_type: str
    head: bytes
    tail: bytes


def multipart_frame(filename: str, part_type: str) -> MultipartFrame:
    boundary = f"----fileshare-sdk-python-{secrets.token_hex(18)}"
    safe_type = re.sub(r"[\r\n]", "", part_type)
    head = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{form_filename(filename)}\"\r\n"
        f"Content-Type: {safe_type}\r\n\r\n"
    ).encode("utf-8")
    tail = f"\r\n--{boundary}--\r\n".encode("ascii")
    return MultipartFrame(f"multipart/form-data; boundary={boundary}", head, tail)


def open_for_read(path: str) -> IO[bytes]:
    return open(path, "rb")


def open_for_write(path: str, start: int) -> IO[bytes]:
    """Opens a download destination at ``start``, cutting anything after it (``wb`` at 0)."""
    file = open(path, "r+b") if start > 0 else open(path, "wb")
    file.seek(start)
    file.truncate()
    return file


def response_error(response: httpx.Response, message: str, kind: type[FileshareError] = FileshareError) -> FileshareError:
    """An error about a response that is not what the API answers (no JSON, no Location, ...), with
    its status, request id, headers and body."""
    try:
        body: Any = response.json() if response.content else None
    except ValueError:
        body = response.text
    except httpx.ResponseNotRead:  # a streamed answer (a download): its body is not kept
        body = None
    return kind(
        message,
        status=response.status_code,
        request_id=response.headers.get("x-request-id"),
        headers=response.headers,
        body=body,
    )


CAPTURE: ContextVar[list[httpx.Response] | None] = ContextVar("fileshare_capture", default=None)
"""Set by ``with_raw_response`` for one call: every answer of the call is appended to it."""


def answered(response: httpx.Response, started: float) -> None:
    """Logs an answer, and keeps it for ``with_raw_response`` when a call asked for it."""
    captured = CAPTURE.get()
    if captured is not None:
        captured.append(response)
    if logger.isEnabledFor(logging.DEBUG):
        request = response.request
        logger.debug(
            "answer: %s %s %s (request id %s, %.0f ms)",
            response.status_code,
            request.method,
            request.url,
            response.headers.get("x-request-id", "-"),
            (time.monotonic() - started) * 1000,
        )


def log_retry(number: int, budget: int, delay: float, error: BaseException) -> None:
    logger.info("retry %d of %d in %.2f s after: %s", number + 1, budget, delay, error)


def int_header(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name, "")
    return int(value) if value.isdigit() else None
