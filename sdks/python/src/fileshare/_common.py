"""What the sync and the async client share: configuration, URLs, retry timing, framing."""

from __future__ import annotations

import base64
import os
import re
import secrets
from dataclasses import dataclass
from typing import IO, Any, Callable, Mapping
from urllib.parse import urlencode

import httpx

from ._errors import (
    APIConnectionError,
    BadRequestError,
    ConfigurationError,
    FileshareError,
    RateLimitError,
    ServerError,
)
from ._version import USER_AGENT

DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = 60.0
DEFAULT_RESUMABLE_THRESHOLD = 64 * 1024 * 1024
DEFAULT_CHUNK_SIZE = 16 * 1024 * 1024
RETRY_AFTER_CAP = 60.0
"""``Retry-After`` is honoured up to this many seconds."""
BACKOFF_BASE = 0.5
"""First backoff step (full jitter: a random wait between 0 and this, doubling per attempt)."""
BACKOFF_MAX = 8.0
SLICE = 256 * 1024
"""Bytes per write of a request body (progress is reported at this granularity)."""
READ_SIZE = 1024 * 1024
"""Bytes per read from an upload source."""
TUS_HEADERS = {"tus-resumable": "1.0.0"}

ProgressCallback = Callable[[int, "int | None"], Any]
"""``on_progress(bytes_done, total_bytes)``; ``total_bytes`` is None for a stream of unknown length."""


@dataclass(frozen=True, slots=True)
class Config:
    base_url: str
    max_retries: int
    timeout: float | None
    resumable_threshold: int
    chunk_size: int


def _non_negative(value: int, name: str, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        raise ConfigurationError(f"{name} must be a {'positive' if positive else 'non-negative'} integer")
    return value


def resolve_config(
    base_url: str | None,
    api_key: str | None,
    max_retries: int,
    timeout: float | None,
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
    if not re.match(r"^https?://[^/]+", base_url):
        raise ConfigurationError("base_url must be an http(s) URL ending in /api/v1")
    if not api_key:
        raise ConfigurationError("no API key: pass api_key= or set FILESHARE_API_KEY")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ConfigurationError("timeout must be a positive number of seconds (or None for no timeout)")
    config = Config(
        base_url=base_url.rstrip("/"),
        max_retries=_non_negative(max_retries, "max_retries"),
        timeout=None if timeout is None else float(timeout),
        resumable_threshold=_non_negative(resumable_threshold, "resumable_threshold"),
        chunk_size=_non_negative(chunk_size, "chunk_size", positive=True),
    )
    return config, api_key


def url(base_url: str, path: str, query: Mapping[str, int | str | None] | None = None) -> str:
    result = base_url + path
    params = {k: str(v) for k, v in (query or {}).items() if v is not None}
    return f"{result}?{urlencode(params)}" if params else result


def headers(api_key: str | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    result = {"user-agent": USER_AGENT, "accept": "application/json"}
    if extra:
        result.update({k.lower(): v for k, v in extra.items()})
    if api_key is not None:
        result["authorization"] = f"Bearer {api_key}"
    return result


def file_id_path(file_id: int | str) -> str:
    text = str(file_id)
    if isinstance(file_id, bool) or not re.fullmatch(r"[1-9][0-9]*", text):
        raise ConfigurationError(f"a file id is a positive integer, got {text[:40]!r}")
    return f"/files/{text}"


def is_retryable(error: BaseException) -> bool:
    """429, 503 and connection failures are worth another attempt; nothing else is."""
    if isinstance(error, (RateLimitError, APIConnectionError)):
        return True
    return isinstance(error, ServerError) and error.status == 503


def is_tus_resumable(error: BaseException) -> bool:
    """A chunk that failed like this is resumed where the server stands (HEAD)."""
    return is_retryable(error) or (isinstance(error, BadRequestError) and error.status in (409, 423, 460))


def retry_delay(attempt: int, error: BaseException, random: Callable[[], float]) -> float:
    """Seconds before retry number ``attempt`` (0 first): ``Retry-After`` (capped at 60 s), else full jitter."""
    if isinstance(error, FileshareError) and error.retry_after is not None:
        return min(float(error.retry_after), RETRY_AFTER_CAP)
    ceiling = min(BACKOFF_MAX, BACKOFF_BASE * 2.0**attempt)
    return random() * ceiling


def connection_error(exc: httpx.TransportError) -> APIConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return APIConnectionError(f"timed out: {type(exc).__name__} (no data moved within timeout)")
    detail = str(exc) or type(exc).__name__
    return APIConnectionError(f"connection failed: {detail}")


def etag_sha256(etag: str | None) -> str | None:
    if not etag:
        return None
    match = re.fullmatch(r'(?:W/)?"([0-9a-fA-F]{64})"', etag.strip())
    return match.group(1).lower() if match else None


def check_sha256(file_id: int, expected: str, actual: str) -> None:
    from ._errors import IntegrityError

    if expected != actual:
        raise IntegrityError(
            f"the server stored file {file_id} with SHA-256 {expected}, but the bytes sent hash to {actual}",
            expected=expected,
            actual=actual,
        )


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


def int_header(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name, "")
    return int(value) if value.isdigit() else None
