"""The exceptions of the SDK: one base class, one subclass per kind of failure."""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = [
    "FileshareError",
    "AuthenticationError",
    "PermissionDeniedError",
    "InsufficientScopeError",
    "IpNotAllowedError",
    "LimitExceededError",
    "NotFoundError",
    "BadRequestError",
    "ScanPendingError",
    "RateLimitError",
    "RateLimitInfo",
    "ServerError",
    "APIConnectionError",
    "APITimeoutError",
    "IntegrityError",
    "ConfigurationError",
    "WebhookVerificationError",
]


@dataclass(frozen=True, slots=True)
class RateLimitInfo:
    """The ``RateLimit-*`` headers of a response, where the server sent them."""

    limit: int | None = None
    """The limit of the window that binds first."""
    remaining: int | None = None
    """Requests left in that window."""
    reset: int | None = None
    """Seconds until that window frees a request."""


class FileshareError(Exception):
    """Base class of every error the SDK raises."""

    status: int | None
    """HTTP status, when there was a response."""
    code: str | None
    """The body's ``error.code`` (snake_case), when there was one."""
    message: str
    request_id: str | None
    """``X-Request-Id`` of the response: quote it when reporting a problem."""
    retry_after: int | None
    """Seconds the server asked to wait (``Retry-After``), when it did."""
    headers: httpx.Headers | None
    """The response's headers (case-insensitive), when there was a response."""
    body: Any
    """The response's body, parsed: the JSON (``{"success": false, "error": {...}}``), else its
    text; None when there was no response or an empty one."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        retry_after: int | None = None,
        headers: httpx.Headers | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.retry_after = retry_after
        self.headers = headers
        self.body = body

    def __str__(self) -> str:
        """The message, and the request id whenever the server named one (every error of a response)."""
        if self.request_id:
            return f"{self.message} (request id {self.request_id})"
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r}, code={self.code!r}, request_id={self.request_id!r})"


class AuthenticationError(FileshareError):
    """401: missing, malformed, unknown, revoked or expired API key; ``code == "invalid_password"``
    when a download's link password is missing or wrong."""


class PermissionDeniedError(FileshareError):
    """403 ``plan_not_supported`` (the account's plan has no API access), ``insufficient_scope``
    (:class:`InsufficientScopeError`) or ``ip_not_allowed`` (:class:`IpNotAllowedError`). Not retried."""

    required_scope: str | None
    """The scope the call needs and the key lacks (``files:delete``, ...): the body's
    ``error.required_scope``, else the ``scope="..."`` of ``WWW-Authenticate``; None when the
    answer names none (always for ``plan_not_supported`` and ``ip_not_allowed``)."""

    def __init__(self, message: str, *, required_scope: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.required_scope = required_scope


class InsufficientScopeError(PermissionDeniedError):
    """403 ``insufficient_scope``: the API key does not hold the scope the call needs
    (``required_scope``). Another key, or the key's scopes changed in the dashboard, will help;
    sending it again will not."""


class IpNotAllowedError(PermissionDeniedError):
    """403 ``ip_not_allowed``: the API key is limited to some addresses (its ``allowed_ips``), and
    the server saw the call come from another one."""


class LimitExceededError(FileshareError):
    """403 ``file_too_large`` / ``daily_upload_limit_exceeded`` / ``storage_quota_exceeded`` /
    ``link_limit_exceeded`` / ``webhook_limit_exceeded`` / ``upload_request_full`` (an upload
    request has no room left for the file) / ``file_not_scannable`` (the file is larger than the
    server's virus scanner can scan, and the server serves only scanned files: refused at upload,
    or a download of a file whose scan ended in ``error``); 413 ``file_too_large`` of resumable
    uploads."""


class NotFoundError(FileshareError):
    """404: no such file (or not this account's), no such upload, no file behind a link."""


class BadRequestError(FileshareError):
    """Any other 4xx: the request was refused as it is; sending it again unchanged will not help
    (except 409 ``idempotency_in_progress`` and 409 ``scan_pending`` (:class:`ScanPendingError`),
    which the SDK retries by itself). 422 ``idempotency_key_reused``: the idempotency key was used
    for another request."""


class ScanPendingError(BadRequestError):
    """409 ``scan_pending``: the file behind a download link has not been scanned for viruses yet,
    and the server serves only scanned files. ``retry_after`` says when to ask again (the server
    sends 10 seconds). ``download()`` already waits that long and asks again, up to
    ``max_retries`` times, before it raises this. A :class:`BadRequestError`, so code that catches
    those still catches it."""


class RateLimitError(FileshareError):
    """429: a request rate limit. ``retry_after`` says how long to wait; ``rate_limit`` holds ``RateLimit-*``."""

    rate_limit: RateLimitInfo

    def __init__(self, message: str, *, rate_limit: RateLimitInfo | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.rate_limit = rate_limit or RateLimitInfo()


class ServerError(FileshareError):
    """5xx."""


class APIConnectionError(FileshareError):
    """No response: the connection failed, dropped, or stayed idle past ``timeout``."""


class APITimeoutError(APIConnectionError):
    """No response within ``timeout``: connecting, or a stretch without a byte sent or received."""


class IntegrityError(FileshareError):
    """The bytes do not match their SHA-256 (an upload's ``sha256``, a download's ``ETag``)."""

    expected: str | None
    """The SHA-256 the SDK expected (the server's or the link's)."""
    actual: str | None
    """The SHA-256 of the bytes the SDK sent or received."""

    def __init__(self, message: str, *, expected: str | None = None, actual: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.expected = expected
        self.actual = actual


class ConfigurationError(FileshareError):
    """The client is not set up right: no base URL, no key, an unsupported source, ..."""


class WebhookVerificationError(FileshareError):
    """A webhook message did not pass :meth:`fileshare.Webhooks.verify` (a header missing, a
    timestamp out of the tolerance, no matching signature, a body that is not a JSON object), or
    the secret given to :class:`fileshare.Webhooks` is not one. The message says which. Answer
    the sender with a 4xx (400 or 401) and do not act on the message."""


LIMIT_CODES = frozenset(
    {
        "file_too_large",
        "daily_upload_limit_exceeded",
        "storage_quota_exceeded",
        "link_limit_exceeded",
        "webhook_limit_exceeded",
        "upload_request_full",
        "file_not_scannable",
    }
)
"""The 403 codes of a limit of the plan or the account (``LimitExceededError``)."""


def _header_int(headers: httpx.Headers, name: str) -> int | None:
    raw = headers.get(name)
    if raw is None or not raw.strip().isdigit():
        return None
    return int(raw.strip())


def parse_retry_after(value: str | None, now: float | None = None) -> int | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    try:
        date = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if date is None:
        return None
    current = time.time() if now is None else now
    return max(0, int(-(-(date.timestamp() - current) // 1)))


_AUTH_PARAM = re.compile(r'(?:^|[\s,])([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))')


def www_authenticate_param(value: str | None, name: str) -> str | None:
    """The ``name="..."`` auth-param of a ``WWW-Authenticate`` header (RFC 6750: ``Bearer
    error="insufficient_scope", scope="files:delete"``), unquoted; None when it has none."""
    if not value:
        return None
    for match in _AUTH_PARAM.finditer(value):
        if match.group(1).lower() == name:
            quoted = match.group(2)
            return re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match.group(3)
    return None


def error_from_response(status: int, headers: httpx.Headers, body: bytes) -> FileshareError:
    """The error for a response that is not a success, from its status, headers and body."""
    code: str | None = None
    server_message: str | None = None
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    required_scope: str | None = None
    parsed_body = parsed if parsed is not None else (text or None)
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        error = parsed["error"]
        if isinstance(error.get("code"), str):
            code = error["code"]
        if isinstance(error.get("message"), str):
            server_message = error["message"]
        if isinstance(error.get("required_scope"), str) and error["required_scope"]:
            required_scope = error["required_scope"]
    request_id = headers.get("x-request-id")
    retry_after = parse_retry_after(headers.get("retry-after"))
    detail = server_message or text.strip()[:200] or "no message"
    message = f"{status}{' ' + code if code else ''}: {detail}"
    kwargs: dict[str, Any] = {
        "status": status,
        "code": code,
        "request_id": request_id,
        "retry_after": retry_after,
        "headers": headers,
        "body": parsed_body,
    }
    if status == 401:
        return AuthenticationError(message, **kwargs)
    if status == 403:
        if code in LIMIT_CODES:
            return LimitExceededError(message, **kwargs)
        challenge = headers.get("www-authenticate")
        if required_scope is None:
            required_scope = www_authenticate_param(challenge, "scope") or None
        if code == "insufficient_scope" or (code is None and www_authenticate_param(challenge, "error") == "insufficient_scope"):
            return InsufficientScopeError(message, required_scope=required_scope, **kwargs)
        if code == "ip_not_allowed":
            return IpNotAllowedError(message, required_scope=required_scope, **kwargs)
        return PermissionDeniedError(message, required_scope=required_scope, **kwargs)
    if status == 413 and code in ("file_too_large", "storage_quota_exceeded", None):
        return LimitExceededError(message, **kwargs)
    if status == 404:
        return NotFoundError(message, **kwargs)
    if status == 429:
        info = RateLimitInfo(
            limit=_header_int(headers, "ratelimit-limit"),
            remaining=_header_int(headers, "ratelimit-remaining"),
            reset=_header_int(headers, "ratelimit-reset"),
        )
        return RateLimitError(message, rate_limit=info, **kwargs)
    if status >= 500:
        return ServerError(message, **kwargs)
    if status == 409 and code == "scan_pending":
        return ScanPendingError(message, **kwargs)
    return BadRequestError(message, **kwargs)
