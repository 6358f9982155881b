"""Unit tests of issue 30 with httpx.MockTransport: per-call options and with_options, raw responses,
headers and body on errors, APITimeoutError, the logger, base URLs, httpx.Timeout, to_dict/to_json,
the resumable upload hooks (upload_url, on_upload_created, keep_on_failure), cancellation, and
hashing off the event loop."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

import fileshare
from fileshare import _logs
from fileshare._async import _io as async_io
from mock_api import BASE, FILE, KEY, FakeServer, error, make, make_async, make_either, sequence

STATS: dict[str, Any] = {
    "success": True,
    "stats": {"total_files": 1, "total_size": 5, "total_downloads": 0, "uploads_today": 1, "storage_reserved": 0},
    "limits": {"max_file_size": 10, "daily_uploads": 3, "requests_per_minute": 10, "requests_per_day": 100, "max_storage": None},
    "plan": "pro",
    "quota_note": "kept",
}
RATE = {"ratelimit-limit": "100", "ratelimit-remaining": "97", "ratelimit-reset": "42", "x-request-id": "req-9"}


def got(body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(200, json=body, headers=headers or {})


# -- configuration -----------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["https://files.example.com", "https://files.example.com/", "https://files.example.com/api"])
def test_a_base_url_without_api_v1_says_what_to_add(url: str) -> None:
    for cls in (fileshare.Client, fileshare.AsyncClient):
        with pytest.raises(fileshare.ConfigurationError, match=r"must end in /api/v1.*add /api/v1") as caught:
            cls(url, KEY)
        assert url.rstrip("/") + "/api/v1" in str(caught.value)
    fileshare.Client(BASE + "/", KEY).close()  # a trailing slash is fine
    fileshare.Client("http://127.0.0.1:8080/files/api/v1", KEY).close()  # so is a prefix before /api/v1


def test_timeout_takes_seconds_an_httpx_timeout_or_none() -> None:
    handler, seen = sequence(got(STATS))
    detailed = httpx.Timeout(5.0, connect=2.0)
    client, _ = make(handler, timeout=detailed)
    assert client.timeout is detailed
    client.stats()
    assert seen[0].extensions["timeout"] == detailed.as_dict()
    client.stats(timeout=1.5)
    assert seen[1].extensions["timeout"] == httpx.Timeout(1.5).as_dict()
    client.stats(timeout=None)
    assert seen[2].extensions["timeout"] == httpx.Timeout(None).as_dict()
    for bad in (0, -1, "5", True):
        with pytest.raises(fileshare.ConfigurationError, match="httpx.Timeout"):
            fileshare.Client(BASE, KEY, timeout=bad)  # type: ignore[arg-type]


# -- errors ------------------------------------------------------------------------------------


def test_every_api_error_has_headers_the_parsed_body_and_its_request_id_in_the_message(flavour: str) -> None:
    handler, _ = sequence(error(404, "not_found", {"x-extra": "1"}), httpx.Response(400, text="<html>bad</html>", headers={"x-request-id": "req-2"}))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.NotFoundError) as caught:
        client.files.get(7)
    assert caught.value.headers is not None and caught.value.headers["x-extra"] == "1"
    assert caught.value.body == {"success": False, "error": {"code": "not_found", "message": "not_found happened"}}
    assert str(caught.value).endswith("(request id req-1)")
    with pytest.raises(fileshare.BadRequestError) as bad:
        client.files.get(7)
    assert bad.value.body == "<html>bad</html>" and "(request id req-2)" in str(bad.value)


def test_a_timeout_is_an_api_timeout_error_under_the_connection_error(flavour: str) -> None:
    handler, seen = sequence(httpx.ReadTimeout("slow"))
    client, _ = make_either(flavour, handler, max_retries=1)
    with pytest.raises(fileshare.APITimeoutError) as caught:
        client.files.get(7)
    assert isinstance(caught.value, fileshare.APIConnectionError) and caught.value.headers is None
    assert len(seen) == 2  # retried like any connection failure
    assert issubclass(fileshare.APITimeoutError, fileshare.APIConnectionError)


# -- per-call options, with_options --------------------------------------------------------------


def test_per_call_options_apply_to_that_call_alone(flavour: str) -> None:
    handler, seen = sequence(error(503, "unavailable"), error(503, "unavailable"), got({"success": True, "file": FILE}))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.ServerError):
        client.files.get(7, max_retries=0, extra_headers={"X-Trace": "abc"}, timeout=3)
    assert len(seen) == 1 and seen[0].headers["x-trace"] == "abc"
    assert seen[0].extensions["timeout"] == httpx.Timeout(3).as_dict()
    assert client.files.get(7).file_id == 7  # the client's own max_retries (2) again, no extra header
    assert len(seen) == 3 and "x-trace" not in seen[2].headers and len(sleeps) == 1
    with pytest.raises(fileshare.ConfigurationError, match="Authorization"):
        client.files.get(7, extra_headers={"Authorization": "Bearer other"})


def test_with_options_is_a_copy_that_shares_the_pool(flavour: str) -> None:
    handler, seen = sequence(got(STATS))
    client, _ = make_either(flavour, handler, default_headers={"x-app": "one"})
    inner: Any = client.client if flavour == "async" else client
    copy = client.with_options(max_retries=0, timeout=2, default_headers={"x-more": "two"})
    copy_inner: Any = copy.client if flavour == "async" else copy
    assert copy_inner.max_retries == 0 and inner.max_retries == 2 and copy_inner._http is inner._http
    copy.stats()
    client.stats()
    assert seen[0].headers["x-app"] == "one" and seen[0].headers["x-more"] == "two"
    assert "x-more" not in seen[1].headers
    assert seen[0].extensions["timeout"] == httpx.Timeout(2).as_dict()
    copy.close()
    assert not inner._http.is_closed  # a copy does not close the pool
    client.close()
    assert inner._http.is_closed
    with pytest.raises(fileshare.ConfigurationError, match="/api/v1"):
        inner.with_options(base_url="https://elsewhere.example.com")


# -- raw responses -----------------------------------------------------------------------------


def test_with_raw_response_shows_the_answers_status_and_rate_limit_headers(flavour: str) -> None:
    handler, _ = sequence(got(STATS, RATE), got({"success": True, "file": FILE}, RATE), httpx.Response(200, json={"success": True}, headers=RATE))
    client, _ = make_either(flavour, handler)
    raw = client.with_raw_response.stats()
    assert isinstance(raw, fileshare.RawResponse) and raw.status_code == 200
    assert raw.headers["RateLimit-Remaining"] == "97" and raw.rate_limit.remaining == 97 and raw.request_id == "req-9"
    assert raw.parse().stats.total_files == 1
    file = client.with_raw_response.files.get(7, max_retries=0)
    assert file.parse().file_id == 7 and file.rate_limit == fileshare.RateLimitInfo(100, 97, 42)
    deleted = client.with_raw_response.files.delete(7)
    assert deleted.parse() is None and deleted.status_code == 200


def test_a_raw_response_of_a_retried_call_holds_every_answer() -> None:
    handler, _ = sequence(error(503, "unavailable"), got({"success": True, "file": FILE}, RATE))
    client, _ = make(handler)
    raw = client.with_raw_response.files.get(7)
    assert [r.status_code for r in raw.http_responses] == [503, 200] and raw.http_response is raw.http_responses[-1]
    client.files.get(7)  # outside with_raw_response nothing is kept
    assert len(raw.http_responses) == 2


# -- logging -----------------------------------------------------------------------------------


def test_the_logger_tells_requests_and_retries_but_never_the_key(flavour: str, caplog: pytest.LogCaptureFixture) -> None:
    handler, _ = sequence(error(503, "unavailable"), got({"success": True, "file": FILE}))
    client, _ = make_either(flavour, handler)
    with caplog.at_level(logging.DEBUG, logger="fileshare"):
        client.files.get(7)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert all(r.name == "fileshare" for r in caplog.records)
    assert "request: GET https://files.example.com/api/v1/files/7" in text and "answer: 200 GET" in text
    assert "retry 1 of 2" in text and "(request id req-1)" in text
    assert KEY not in text and "Bearer" not in text


def test_fileshare_log_sets_the_level_and_a_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    logger = logging.getLogger("fileshare")
    level, handlers = logger.level, list(logger.handlers)
    try:
        monkeypatch.setenv("FILESHARE_LOG", "info")
        fileshare.Client(BASE, KEY).close()
        assert logger.level == logging.INFO and _logs._handler in logger.handlers
        monkeypatch.setenv("FILESHARE_LOG", "debug")
        fileshare.Client(BASE, KEY).close()
        assert logger.level == logging.DEBUG and logger.handlers.count(_logs._handler) == 1
    finally:
        logger.setLevel(level)
        logger.handlers[:] = handlers
        _logs._handler = None


# -- records -----------------------------------------------------------------------------------


def test_to_dict_and_to_json() -> None:
    result = fileshare.StatsResult.from_json(STATS)
    data = result.to_dict()
    assert data["stats"]["total_files"] == 1 and data["limits"]["max_storage"] is None and data["quota_note"] == "kept"
    text = result.to_json()
    assert isinstance(text, str) and json.loads(text) == data and "\n" in text
    assert "\n" not in result.to_json(indent=None)
    record = fileshare.FileRecord.from_json({**FILE, "labels": ["x"]})
    assert record.to_dict() == {**FILE, "expires_at": None, "scan": None, "labels": ["x"]}
    page = fileshare.FileList.from_json({"files": [FILE], "pagination": {"page": 1, "limit": 20, "total": 1, "pages": 1}})
    assert page.to_dict()["files"][0]["file_id"] == 7


# -- resumable uploads across processes ----------------------------------------------------------


class Dropping(FakeServer):
    """A tus server whose PATCH after ``drop_after`` bytes fails with a connection error, every time."""

    def __init__(self, drop_after: int | None = None) -> None:
        super().__init__()
        self.drop_after = drop_after

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH" and self.drop_after is not None and len(self.received) >= self.drop_after:
            request.read()
            self.calls.append(("PATCH", request.url.path))
            raise httpx.WriteError("the connection dropped")
        return super().__call__(request)


def test_on_upload_created_gives_the_url_and_upload_url_continues_it(flavour: str) -> None:
    data = bytes(range(256)) * 64  # 16 KiB
    server = Dropping(drop_after=4096)
    client, _ = make_either(flavour, server, max_retries=1)
    urls: list[str] = []
    with pytest.raises(fileshare.APIConnectionError):
        client.files.upload(data, filename="a.bin", resumable=True, chunk_size=4096, on_upload_created=urls.append)
    assert urls == [f"https://files.example.com{FakeServer.UPLOAD}"]
    assert ("DELETE", FakeServer.UPLOAD) not in server.calls  # kept: the caller knows its URL
    assert len(server.received) == 4096

    server.drop_after = None
    server.calls.clear()
    server.headers.clear()
    later, _ = make_either(flavour, server)
    seen: list[str] = []
    record = later.files.upload(data, filename="a.bin", upload_url=urls[0], chunk_size=4096, on_upload_created=seen.append)
    assert record.sha256 == hashlib.sha256(data).hexdigest() and bytes(server.received) == data
    assert server.calls[:2] == [("OPTIONS", "/api/v1/uploads"), ("HEAD", FakeServer.UPLOAD)]
    assert ("POST", "/api/v1/uploads") not in server.calls and seen == urls
    patches = [h for (m, _), h in zip(server.calls, server.headers) if m == "PATCH"]
    assert [p["upload-offset"] for p in patches] == ["4096", "8192", "12288"]  # the held bytes are not sent again


def test_upload_url_with_another_source_length_is_refused_and_the_upload_kept(flavour: str) -> None:
    server = FakeServer()
    server.length = 10
    client, _ = make_either(flavour, server)
    with pytest.raises(fileshare.ConfigurationError, match="is of 10 bytes, but the source has 5"):
        client.files.upload(b"hello", upload_url=FakeServer.UPLOAD)
    assert ("DELETE", FakeServer.UPLOAD) not in server.calls
    with pytest.raises(fileshare.ConfigurationError, match="upload_url"):
        client.files.upload(b"hello", upload_url=FakeServer.UPLOAD, resumable=False)


@pytest.mark.parametrize(
    ("options", "deleted"),
    [({}, True), ({"keep_on_failure": True}, False), ({"idempotency_key": "k1"}, False), ({"idempotency_key": "k1", "keep_on_failure": False}, True)],
)
def test_keep_on_failure_decides_what_becomes_of_a_failed_upload(flavour: str, options: dict[str, Any], deleted: bool) -> None:
    server = Dropping(drop_after=0)
    client, _ = make_either(flavour, server, max_retries=0)
    with pytest.raises(fileshare.APIConnectionError):
        client.files.upload(b"hello", resumable=True, **options)
    assert (("DELETE", FakeServer.UPLOAD) in server.calls) is deleted


# -- cancellation ------------------------------------------------------------------------------


def test_a_cancelled_async_upload_stops_and_is_deleted_unless_kept() -> None:
    for keep, deleted in ((None, True), (True, False)):
        server = FakeServer()
        started = asyncio.Event()

        async def slow() -> Any:
            yield b"a" * 1000
            started.set()
            await asyncio.sleep(30)
            yield b"b"

        async def run() -> None:
            client, _ = make_async(server)
            async with client:
                task = asyncio.create_task(client.files.upload(slow(), size=1001, resumable=True, chunk_size=500, keep_on_failure=keep))
                await asyncio.wait_for(started.wait(), 5)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

        asyncio.run(asyncio.wait_for(run(), 10))
        assert (("DELETE", FakeServer.UPLOAD) in server.calls) is deleted


# -- hashing off the event loop ------------------------------------------------------------------


def test_large_pieces_are_hashed_in_a_worker_thread() -> None:
    threads: list[int] = []

    class Spy:
        def update(self, data: bytes | memoryview, /) -> None:
            threads.append(threading.get_ident())

    async def run() -> int:
        await async_io.update_hash(Spy(), b"x" * 100)
        await async_io.update_hash(Spy(), b"x" * async_io.HASH_INLINE)
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    assert threads[0] == loop_thread and threads[1] != loop_thread


def test_an_async_upload_of_large_chunks_leaves_the_loop_free(tmp_path: Path) -> None:
    """While a 16 MiB chunk is hashed, a ticker on the same loop keeps ticking."""
    data = bytes(range(256)) * (64 * 1024)  # 16 MiB
    server = FakeServer()

    async def run() -> int:
        client, _ = make_async(server)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        tick = asyncio.create_task(ticker())
        async with client:
            record = await client.files.upload(data, resumable=True)
        tick.cancel()
        assert record.sha256 == hashlib.sha256(data).hexdigest()
        return ticks

    assert asyncio.run(run()) > 10
