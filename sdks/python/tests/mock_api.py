"""A stand-in for the API in unit tests: clients on an ``httpx.MockTransport``, canned answers."""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import httpx

import fileshare
from helpers import BlockingAsync

BASE = "https://files.example.com/api/v1"
KEY = "fsk_" + "k" * 43
FILE: dict[str, Any] = {
    "file_id": 7,
    "filename": "a.txt",
    "size": 5,
    "upload_date": "2026-11-22 00:17:19",
    "download_count": 0,
    "public_link": "https://files.example.com/download/tok",
    "content_type": "text/plain",
    "sha256": hashlib.sha256(b"hello").hexdigest(),
}
Handler = Callable[[httpx.Request], httpx.Response]


def error(status: int, code: str, headers: dict[str, str] | None = None) -> httpx.Response:
    body = {"success": False, "error": {"code": code, "message": f"{code} happened"}}
    return httpx.Response(status, json=body, headers={"x-request-id": "req-1", **(headers or {})})


def make(handler: Handler, **options: Any) -> tuple[fileshare.Client, list[float]]:
    client = fileshare.Client(BASE, KEY, transport=httpx.MockTransport(handler), **options)
    sleeps: list[float] = []
    client._sleep = sleeps.append
    return client, sleeps


def make_async(handler: Handler, **options: Any) -> tuple[fileshare.AsyncClient, list[float]]:
    client = fileshare.AsyncClient(BASE, KEY, transport=httpx.MockTransport(handler), **options)
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    client._sleep = sleep
    return client, sleeps


def sequence(*responses: httpx.Response | Exception) -> tuple[Handler, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        answer = responses[min(len(seen) - 1, len(responses) - 1)]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handler, seen


def make_either(flavour: str, handler: Handler, **options: Any) -> tuple[Any, list[float]]:
    """A Client, or an AsyncClient behind a blocking face (``helpers.BlockingAsync``), on ``handler``."""
    if flavour == "sync":
        return make(handler, **options)
    client, sleeps = make_async(handler, **options)
    return BlockingAsync(client), sleeps
