"""A stand-in for the API in unit tests: clients on an ``httpx.MockTransport``, canned answers."""

from __future__ import annotations

import asyncio
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


class FakeServer:
    """A stand-in for the API that takes both kinds of upload and records every request.

    Multipart (``POST /files/upload``) and tus (``OPTIONS``/``POST /uploads``, ``PATCH``, ``HEAD``,
    then ``GET`` of the upload). The records it answers carry the SHA-256 of the bytes it received,
    or ``sha256`` when given (a server that stored other bytes). With ``replay`` the creation is
    answered as the replay of an earlier one (``Idempotent-Replayed: true``), the upload keeping
    the bytes it holds (``received``)."""

    UPLOAD = "/api/v1/uploads/up1"

    def __init__(self, *, tus: bool = True, sha256: str | None = None) -> None:
        self.tus = tus
        self.sha256 = sha256
        self.calls: list[tuple[str, str]] = []
        self.headers: list[httpx.Headers] = []
        self.received = bytearray()
        self.length: int | None = None
        self.replay = False

    def record(self, data: bytes) -> dict[str, Any]:
        return {**FILE, "size": len(data), "sha256": self.sha256 or hashlib.sha256(data).hexdigest()}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        method, path = request.method, request.url.path
        self.calls.append((method, path))
        self.headers.append(request.headers)
        tus = {"tus-resumable": "1.0.0"}
        if (method, path) == ("OPTIONS", "/api/v1/uploads"):
            if not self.tus:
                return error(404, "not_found")
            offered = {"tus-version": "1.0.0", "tus-extension": "creation,checksum,termination", "tus-checksum-algorithm": "sha256"}
            return httpx.Response(204, headers={**tus, **offered})
        if (method, path) == ("POST", "/api/v1/files/upload"):
            assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
            content = body.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n--", 1)[0]
            return httpx.Response(201, json={"success": True, **self.record(content)})
        if (method, path) == ("POST", "/api/v1/uploads"):
            assert self.tus
            self.length = int(request.headers["upload-length"])
            replayed = {"idempotent-replayed": "true"} if self.replay else {}
            return httpx.Response(201, headers={**tus, "location": self.UPLOAD, "upload-offset": "0", **replayed})
        if (method, path) == ("PATCH", self.UPLOAD):
            assert request.headers["content-type"] == "application/offset+octet-stream"
            assert int(request.headers["upload-offset"]) == len(self.received)
            self.received += body
            return httpx.Response(204, headers={**tus, "upload-offset": str(len(self.received)), **self._done()})
        if (method, path) == ("HEAD", self.UPLOAD):
            length = {} if self.length is None else {"upload-length": str(self.length)}
            return httpx.Response(200, headers={**tus, "upload-offset": str(len(self.received)), **length, **self._done()})
        if (method, path) == ("GET", self.UPLOAD):
            upload = {"offset": len(self.received), "length": self.length, "file": self.record(bytes(self.received))}
            return httpx.Response(200, json={"success": True, "upload": upload})
        if (method, path) == ("DELETE", self.UPLOAD):
            return httpx.Response(204, headers=tus)
        raise AssertionError(f"unexpected {method} {path}")


    def _done(self) -> dict[str, str]:
        return {"fileshare-file-id": "7"} if len(self.received) == self.length else {}


def upload_with(
    flavour: str, handler: Handler, source: Any, upload: dict[str, Any] | None = None, **options: Any
) -> fileshare.FileRecord:
    """``files.upload(source, **upload)`` through a Client or an AsyncClient on a MockTransport."""
    if flavour == "sync":
        client, _ = make(handler, **options)
        with client:
            return client.files.upload(source, **(upload or {}))
    aclient, _ = make_async(handler, **options)

    async def run() -> fileshare.FileRecord:
        async with aclient:
            return await aclient.files.upload(source, **(upload or {}))

    return asyncio.run(run())
