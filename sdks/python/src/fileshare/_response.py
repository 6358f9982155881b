"""``RawResponse``: what ``client.with_raw_response.<call>(...)`` returns."""

from __future__ import annotations

from typing import Generic, TypeVar

import httpx

from ._errors import RateLimitInfo, _header_int

T = TypeVar("T")

__all__ = ["RawResponse"]


class RawResponse(Generic[T]):
    """The HTTP answer of a call, and what the call returned (``parse()``).

    A call that took several requests (retries, a resumable upload's chunks) shows its last answer;
    ``http_responses`` holds them all, in order."""

    http_response: httpx.Response
    """The last answer of the call (its body already read, except a download's)."""
    http_responses: list[httpx.Response]

    def __init__(self, responses: list[httpx.Response], parsed: T) -> None:
        self.http_response = responses[-1]
        self.http_responses = list(responses)
        self._parsed = parsed

    def parse(self) -> T:
        """What the call returns without ``with_raw_response`` (a record, a page, None, ...)."""
        return self._parsed

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        """Case-insensitive: ``raw.headers["ratelimit-remaining"]``."""
        return self.http_response.headers

    @property
    def request_id(self) -> str | None:
        """``X-Request-Id``: quote it when reporting a problem."""
        value: str | None = self.http_response.headers.get("x-request-id")
        return value

    @property
    def rate_limit(self) -> RateLimitInfo:
        """The ``RateLimit-*`` headers of the answer (``rate_limit.remaining``: requests left)."""
        headers = self.http_response.headers
        return RateLimitInfo(
            limit=_header_int(headers, "ratelimit-limit"),
            remaining=_header_int(headers, "ratelimit-remaining"),
            reset=_header_int(headers, "ratelimit-reset"),
        )

    def __repr__(self) -> str:
        request = self.http_response.request
        return f"<RawResponse [{self.status_code}] {request.method} {request.url}>"
