"""Unit tests with httpx.MockTransport: configuration, error mapping, retries, uploads, iterate."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

import fileshare
from fileshare._common import retry_delay
from mock_api import BASE, FILE, KEY, FakeServer, error, make, make_async, sequence, upload_with

# -- configuration -----------------------------------------------------------------------------


def test_configuration_errors_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(fileshare.ConfigurationError, match="FILESHARE_BASE_URL"):
        fileshare.Client(api_key=KEY)
    with pytest.raises(fileshare.ConfigurationError, match="FILESHARE_API_KEY"):
        fileshare.AsyncClient(base_url=BASE)
    with pytest.raises(fileshare.ConfigurationError):
        fileshare.Client(BASE, KEY, max_retries=-1)
    with pytest.raises(fileshare.ConfigurationError):
        fileshare.Client("files.example.com", KEY)
    monkeypatch.setenv("FILESHARE_BASE_URL", BASE + "/")
    monkeypatch.setenv("FILESHARE_API_KEY", KEY)
    with fileshare.Client() as client:
        assert client.base_url == BASE and client.max_retries == 2 and client.timeout == 60.0


def test_repr_and_messages_never_show_the_key() -> None:
    handler, seen = sequence(error(401, "unauthorized"))
    client, _ = make(handler)
    assert KEY not in repr(client) and "[redacted]" in repr(client)
    assert KEY not in repr(fileshare.AsyncClient(BASE, KEY))
    with pytest.raises(fileshare.AuthenticationError) as caught:
        client.stats()
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert seen[0].headers["user-agent"] == f"fileshare-sdk-python/{fileshare.__version__}"


def test_context_managers_close_the_pool() -> None:
    with fileshare.Client(BASE, KEY) as client:
        pass
    assert client._http.is_closed

    async def run() -> fileshare.AsyncClient:
        async with fileshare.AsyncClient(BASE, KEY) as aclient:
            pass
        return aclient

    assert asyncio.run(run())._http.is_closed


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, code, cls",
    [
        (401, "unauthorized", fileshare.AuthenticationError),
        (403, "plan_not_supported", fileshare.PermissionDeniedError),
        (403, "file_too_large", fileshare.LimitExceededError),
        (403, "daily_upload_limit_exceeded", fileshare.LimitExceededError),
        (403, "link_limit_exceeded", fileshare.LimitExceededError),
        (403, "storage_quota_exceeded", fileshare.LimitExceededError),
        (409, "idempotency_in_progress", fileshare.BadRequestError),
        (422, "idempotency_key_reused", fileshare.BadRequestError),
        (409, "default_link_required", fileshare.BadRequestError),
        (401, "invalid_password", fileshare.AuthenticationError),
        (413, "file_too_large", fileshare.LimitExceededError),
        (413, "upload_length_exceeded", fileshare.BadRequestError),
        (404, "not_found", fileshare.NotFoundError),
        (400, "invalid_parameter", fileshare.BadRequestError),
        (410, "upload_expired", fileshare.BadRequestError),
        (429, "rate_limited", fileshare.RateLimitError),
        (500, "internal_error", fileshare.ServerError),
        (507, "insufficient_storage", fileshare.ServerError),
    ],
)
def test_error_mapping(status: int, code: str, cls: type[fileshare.FileshareError]) -> None:
    headers = {"retry-after": "7", "ratelimit-limit": "10", "ratelimit-remaining": "0", "ratelimit-reset": "7"}
    handler, seen = sequence(error(status, code, headers))
    client, _ = make(handler, max_retries=0)
    with pytest.raises(fileshare.FileshareError) as caught:
        client.files.get(7)
    assert type(caught.value) is cls
    assert (caught.value.status, caught.value.code, caught.value.request_id) == (status, code, "req-1")
    assert caught.value.message == f"{status} {code}: {code} happened"
    assert caught.value.retry_after == 7
    if isinstance(caught.value, fileshare.RateLimitError):
        assert caught.value.rate_limit == fileshare.RateLimitInfo(limit=10, remaining=0, reset=7)


def test_an_answer_that_is_not_json() -> None:
    handler, _ = sequence(httpx.Response(502, text="<html>Bad gateway</html>"))
    client, _ = make(handler)
    with pytest.raises(fileshare.ServerError, match="502: <html>Bad gateway"):
        client.stats()


# -- retries -----------------------------------------------------------------------------------

STATS = {
    "success": True,
    "stats": {"total_files": 1, "total_size": 5, "total_downloads": 0, "uploads_today": 1, "new_counter": 3},
    "limits": {"max_file_size": 10, "daily_uploads": 3, "requests_per_minute": 10, "requests_per_day": 100},
    "plan": "pro",
    "quota": {"bytes": 1},
}


def test_429_honours_retry_after_up_to_60s_and_raises_at_once_beyond() -> None:
    handler, seen = sequence(error(429, "rate_limited", {"retry-after": "60"}), httpx.Response(200, json=STATS))
    client, sleeps = make(handler)
    assert client.stats().plan == "pro"
    assert len(seen) == 2 and sleeps == [60.0]

    handler, seen = sequence(error(429, "rate_limited", {"retry-after": "61"}), httpx.Response(200, json=STATS))
    client, sleeps = make(handler)
    with pytest.raises(fileshare.RateLimitError) as caught:
        client.stats()
    assert caught.value.retry_after == 61 and len(seen) == 1 and sleeps == []


def test_503_and_connection_failures_back_off_with_jitter_then_give_up() -> None:
    handler, seen = sequence(error(503, "service_unavailable"), httpx.ConnectError("refused"), httpx.ConnectError("refused"))
    client, sleeps = make(handler)
    client._random = lambda: 1.0
    with pytest.raises(fileshare.APIConnectionError):
        client.stats()
    assert len(seen) == 3 and sleeps == [0.5, 1.0]  # max_retries=2: three attempts
    assert retry_delay(10, fileshare.ServerError("x", status=503), lambda: 1.0) == 8.0


@pytest.mark.parametrize("status, code", [(500, "internal_error"), (502, "bad_gateway"), (504, "gateway_timeout")])
def test_500_502_and_504_are_retried(status: int, code: str) -> None:
    handler, seen = sequence(error(status, code), httpx.Response(200, json=STATS))
    client, sleeps = make(handler)
    assert client.stats().plan == "pro"
    assert len(seen) == 2 and len(sleeps) == 1


@pytest.mark.parametrize(
    "status, code",
    [(400, "invalid_parameter"), (404, "not_found"), (401, "unauthorized"), (501, "not_implemented"), (422, "idempotency_key_reused"), (409, "conflict")],
)
def test_other_errors_are_not_retried(status: int, code: str) -> None:
    handler, seen = sequence(error(status, code), httpx.Response(200, json=STATS))
    client, sleeps = make(handler)
    with pytest.raises(fileshare.FileshareError):
        client.stats()
    assert len(seen) == 1 and sleeps == []


def test_timeouts_are_connection_errors() -> None:
    handler, seen = sequence(httpx.ReadTimeout("slow"))
    client, _ = make(handler, max_retries=1)
    with pytest.raises(fileshare.APIConnectionError, match="timed out"):
        client.files.list()
    assert len(seen) == 2


def test_multipart_upload_retried_only_when_the_source_can_be_replayed(tmp_path: Path) -> None:
    created = httpx.Response(201, json={"success": True, **FILE})
    handler, seen = sequence(error(503, "service_unavailable"), created)
    client, _ = make(handler)
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello")
    assert client.files.upload(path).file_id == 7
    assert len(seen) == 2 and seen[0].content == seen[1].content
    body = seen[1].content
    assert b'name="file"; filename="a.txt"' in body and b"\r\n\r\nhello\r\n--" in body
    assert seen[1].headers["content-length"] == str(len(body))

    handler, seen = sequence(error(503, "service_unavailable"), created)
    client, _ = make(handler)
    with pytest.raises(fileshare.ServerError):
        client.files.upload(iter([b"hel", b"lo"]), filename="a.txt")  # a one-shot stream: never resent
    assert len(seen) == 1 and "content-length" not in seen[0].headers


def test_integrity_error_when_the_server_hash_differs() -> None:
    handler, _ = sequence(httpx.Response(201, json={**FILE, "sha256": "f" * 64}))
    client, _ = make(handler)
    with pytest.raises(fileshare.IntegrityError) as caught:
        client.files.upload(b"hello")
    assert caught.value.expected == "f" * 64 and caught.value.actual == FILE["sha256"]


def test_progress_and_async_upload_of_a_file_object(tmp_path: Path) -> None:
    handler, seen = sequence(httpx.Response(201, json=FILE))
    client, _ = make_async(handler)
    progress: list[tuple[int, int | None]] = []
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello")

    async def run() -> fileshare.FileRecord:
        async with client:
            with open(path, "rb") as handle:
                return await client.files.upload(handle, on_progress=lambda s, t: progress.append((s, t)))

    assert asyncio.run(run()).sha256 == FILE["sha256"]
    assert progress[0] == (0, 5) and progress[-1] == (5, 5)


# -- records and iterate -----------------------------------------------------------------------


def test_records_keep_unknown_fields_and_give_an_aware_datetime() -> None:
    handler, _ = sequence(httpx.Response(200, json=STATS))
    stats = make(handler)[0].stats()
    assert stats.stats.total_files == 1 and stats.stats.extra == {"new_counter": 3}
    assert stats.extra == {"quota": {"bytes": 1}} and stats.limits.requests_per_minute == 10
    record = fileshare.FileRecord.from_json({**FILE, "labels": ["x"]})
    assert record.uploaded_at == datetime(2026, 11, 22, 0, 17, 19, tzinfo=timezone.utc)
    assert record.extra == {"labels": ["x"]} and record.to_dict()["labels"] == ["x"]


def test_iterate_on_a_server_without_before_id_pages_by_number() -> None:
    def page(ids: list[int], number: int) -> httpx.Response:
        files = [{**FILE, "file_id": i} for i in ids]
        return httpx.Response(200, json={"success": True, "files": files, "pagination": {"page": number, "limit": 2, "total": 5, "pages": 3}})

    handler, seen = sequence(page([9, 8], 1), page([8, 7], 2), page([6], 3))  # a new upload shifted 8 onto page 2
    client, _ = make(handler)
    assert [f.file_id for f in client.files.iterate(limit=2)] == [9, 8, 7, 6]
    assert [r.url.params.get("page") for r in seen] == [None, "2", "3"]

    handler, _ = sequence(page([9, 8], 1), page([8, 7], 2), page([6], 3))
    aclient, _ = make_async(handler)

    async def collect() -> list[int]:
        return [f.file_id async for f in aclient.files.iterate(limit=2)]

    assert asyncio.run(collect()) == [9, 8, 7, 6]


# -- resumable uploads -------------------------------------------------------------------------


def test_resumable_upload_resumes_from_head_after_a_failed_chunk() -> None:
    data = bytes(range(256)) * 40  # 10240 bytes, chunks of 4096
    state: dict[str, Any] = {"offset": 0, "patches": 0, "file": None}

    def handler(request: httpx.Request) -> httpx.Response:
        body = request.read()
        tus = {"tus-resumable": "1.0.0"}
        if request.method == "OPTIONS":
            return httpx.Response(204, headers={"tus-version": "1.0.0", "tus-extension": "creation,checksum", "tus-checksum-algorithm": "sha1,sha256"})
        if request.method == "POST":
            assert request.headers["upload-length"] == str(len(data))
            return httpx.Response(201, headers={**tus, "location": "/api/v1/uploads/abc"})
        if request.method == "PATCH":
            state["patches"] += 1
            assert int(request.headers["upload-offset"]) == state["offset"]
            import base64

            assert request.headers["upload-checksum"] == "sha256 " + base64.b64encode(hashlib.sha256(body).digest()).decode()
            if state["patches"] == 2:
                state["offset"] += 1000  # a cut: the server kept part of the chunk
                raise httpx.RemoteProtocolError("peer closed")
            state["offset"] += len(body)
            extra = {}
            if state["offset"] == len(data):
                extra["fileshare-file-id"] = "7"
            return httpx.Response(204, headers={**tus, "upload-offset": str(state["offset"]), **extra})
        if request.method == "HEAD":
            return httpx.Response(200, headers={**tus, "upload-offset": str(state["offset"])})
        if request.method == "GET":
            file = {**FILE, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            return httpx.Response(200, json={"success": True, "upload": {"offset": len(data), "length": len(data), "file": file}})
        raise AssertionError(request.method)

    client, sleeps = make(handler, chunk_size=4096)
    file = client.files.upload(data, resumable=True)
    assert file.size == len(data) and state["patches"] == 4 and len(sleeps) == 1


THRESHOLD = 100
TUS_CALLS = [
    ("OPTIONS", "/api/v1/uploads"),
    ("POST", "/api/v1/uploads"),
    ("PATCH", FakeServer.UPLOAD),  # chunks of 40 bytes: 40 + 40 + 20 (or + 21)
    ("PATCH", FakeServer.UPLOAD),
    ("PATCH", FakeServer.UPLOAD),
    ("GET", FakeServer.UPLOAD),
]
MULTIPART_CALLS = [("POST", "/api/v1/files/upload")]


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("kind", ["bytes", "path"])
@pytest.mark.parametrize("size, resumable", [(THRESHOLD - 1, False), (THRESHOLD, True), (THRESHOLD + 1, True)])
def test_resumable_threshold_picks_tus_at_or_above_it_and_multipart_below(
    flavour: str, kind: str, size: int, resumable: bool, tmp_path: Path
) -> None:
    data = (bytes(range(256)) * 2)[:size]
    source: Any = data
    if kind == "path":
        source = tmp_path / "a.bin"
        source.write_bytes(data)
    server = FakeServer()
    file = upload_with(flavour, server, source, resumable_threshold=THRESHOLD, chunk_size=40)
    assert file.sha256 == hashlib.sha256(data).hexdigest() and file.size == size
    if resumable:
        assert server.calls == TUS_CALLS and bytes(server.received) == data
    else:
        assert server.calls == MULTIPART_CALLS  # below the threshold: not even an OPTIONS
        assert server.received == b""


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_above_the_threshold_without_tus_on_the_server_is_multipart(flavour: str) -> None:
    server = FakeServer(tus=False)
    data = bytes(range(256))
    file = upload_with(flavour, server, data, resumable_threshold=THRESHOLD)
    assert file.sha256 == hashlib.sha256(data).hexdigest()
    assert server.calls == [("OPTIONS", "/api/v1/uploads"), *MULTIPART_CALLS]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_integrity_error_when_a_resumable_upload_hashes_differently(flavour: str) -> None:
    server = FakeServer(sha256="0" * 64)  # the finished upload names a file with another SHA-256
    data = (bytes(range(256)) * 2)[:THRESHOLD]
    with pytest.raises(fileshare.IntegrityError) as caught:
        upload_with(flavour, server, data, resumable_threshold=THRESHOLD, chunk_size=40)
    assert caught.value.expected == "0" * 64 and caught.value.actual == hashlib.sha256(data).hexdigest()
    assert server.calls == TUS_CALLS and bytes(server.received) == data  # it went through tus, and whole


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_resumable_upload_sends_its_expiry_on_the_creation(flavour: str) -> None:
    server = FakeServer()
    upload_with(flavour, server, bytes(100), {"expires_in": 3600}, resumable_threshold=THRESHOLD, chunk_size=40)
    assert server.calls == TUS_CALLS
    assert [h.get("fileshare-expires-in") for h in server.headers] == [None, "3600", None, None, None, None]


def test_resumable_true_needs_a_server_that_offers_it() -> None:
    handler, _ = sequence(httpx.Response(404, json={"success": False, "error": {"code": "not_found", "message": "x"}}))
    client, _ = make(handler)
    with pytest.raises(fileshare.ConfigurationError, match="resumable"):
        client.files.upload(b"x", resumable=True)


def test_unsupported_sources() -> None:
    client, _ = make(sequence(httpx.Response(200))[0])
    with pytest.raises(fileshare.ConfigurationError):
        client.files.upload(12345)  # type: ignore[arg-type]
    with pytest.raises(fileshare.ConfigurationError):
        client.files.upload("/no/such/file")


def test_the_sync_client_is_generated_from_the_async_one() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "unasync.py"
    assert subprocess.run([sys.executable, str(script), "--check"]).returncode == 0
