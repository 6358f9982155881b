"""Unit tests of issue 29 with httpx.MockTransport: idempotency keys (one per call, on every attempt,
or the caller's own), the retry rules (5xx, 409 ``idempotency_in_progress``, a Retry-After over 60 s
raising at once), answers replayed for a key (multipart and tus), paging by ``before_id``, and the
quota fields of stats."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterable, Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest

import fileshare
from helpers import BlockingAsync
from mock_api import BASE, FILE, KEY, FakeServer, Handler, error, make_either, sequence, upload_with

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
LINK: dict[str, Any] = {
    "link_id": 12,
    "file_id": 7,
    "url": "https://files.example.com/download/tok2",
    "default": False,
    "label": None,
    "expires_at": None,
    "max_downloads": None,
    "download_count": 0,
    "password_protected": False,
    "status": "active",
    "created_at": "2026-11-27 10:00:00",
}


def created() -> httpx.Response:
    return httpx.Response(201, json={"success": True, **FILE})


def keys(requests: list[httpx.Request]) -> list[str | None]:
    return [r.headers.get("idempotency-key") for r in requests]


# -- idempotency keys --------------------------------------------------------------------------


def test_every_attempt_of_an_upload_carries_the_calls_one_key(flavour: str, tmp_path: Path) -> None:
    handler, seen = sequence(httpx.ReadError("dropped"), error(409, "idempotency_in_progress", {"retry-after": "1"}), created())
    client, sleeps = make_either(flavour, handler)
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello")
    assert client.files.upload(path).file_id == 7
    first = keys(seen)
    assert len(first) == 3 and len(set(first)) == 1 and UUID4.fullmatch(first[0] or "")
    assert sleeps[1] == 1.0  # 409 idempotency_in_progress: its Retry-After, then the same key again
    assert seen[0].content == seen[2].content

    client.files.upload(b"hello")
    assert keys(seen)[3] not in first  # a new call, a new key


def test_the_callers_own_key_is_sent_as_given_and_checked_before_anything(flavour: str) -> None:
    handler, seen = sequence(created(), httpx.Response(201, json={"success": True, "link": LINK}))
    client, _ = make_either(flavour, handler)
    client.files.upload(b"hello", idempotency_key="invoice-2026-11/42")
    client.links.create(7, idempotency_key="k" * 255)
    assert keys(seen) == ["invoice-2026-11/42", "k" * 255]
    for bad in ("", "k" * 256, "line\nbreak", "tab\there", "caf\u00e9"):
        with pytest.raises(fileshare.ConfigurationError, match="idempotency_key must be 1 to 255 printable ASCII"):
            client.files.upload(b"hello", idempotency_key=bad)
        with pytest.raises(fileshare.ConfigurationError, match="idempotency_key"):
            client.links.create(7, idempotency_key=bad)
    assert len(seen) == 2  # refused before any request


def test_only_creating_calls_carry_a_key(flavour: str) -> None:
    page = {"success": True, "files": [FILE], "pagination": {"page": 1, "limit": 20, "total": 1, "pages": 1, "next_before_id": None}}
    stats = {"success": True, "stats": {"total_files": 1, "total_size": 5, "total_downloads": 0, "uploads_today": 1}}
    stats["limits"] = {"max_file_size": 10, "daily_uploads": 3, "requests_per_minute": 10, "requests_per_day": 100}
    answers: dict[str, httpx.Response] = {
        "GET /api/v1/files/7": httpx.Response(200, json={"success": True, "file": FILE}),
        "GET /api/v1/files": httpx.Response(200, json=page),
        "GET /api/v1/stats": httpx.Response(200, json=stats),
        "PATCH /api/v1/files/7": httpx.Response(200, json={"success": True, "file": FILE}),
        "POST /api/v1/links/12/rotate": httpx.Response(200, json={"success": True, "link": LINK}),
        "DELETE /api/v1/files/7": httpx.Response(200, json={"success": True}),
    }
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[f"{request.method} {request.url.path}"]

    client, _ = make_either(flavour, handler)
    client.files.get(7)
    client.files.list()
    list(client.files.iterate())
    client.stats()
    client.files.update(7, filename="b.txt")
    client.links.rotate(12)
    client.files.delete(7)
    assert len(seen) == 7 and keys(seen) == [None] * 7


def test_422_idempotency_key_reused_is_a_bad_request_and_not_retried(flavour: str) -> None:
    handler, seen = sequence(error(422, "idempotency_key_reused"), created())
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.BadRequestError) as caught:
        client.files.upload(b"other bytes", idempotency_key="k1")
    assert (caught.value.status, caught.value.code) == (422, "idempotency_key_reused")
    assert len(seen) == 1 and sleeps == []


def test_an_answer_that_is_not_2xx_leaves_the_key_for_the_retry(flavour: str) -> None:
    handler, seen = sequence(error(500, "internal_error"), error(503, "service_unavailable"), created())
    client, sleeps = make_either(flavour, handler)
    assert client.files.upload(b"hello", idempotency_key="k2").file_id == 7
    assert keys(seen) == ["k2"] * 3 and len(sleeps) == 2


# -- a Retry-After over 60 s raises at once, everywhere ----------------------------------------

TOO_LONG = {"retry-after": "120"}


def _tus_refusing_chunks(server: FakeServer) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            server.calls.append(("PATCH", request.url.path))
            return error(503, "service_unavailable", TOO_LONG)
        return server(request)

    return handler


def _grant_refusing_downloads() -> tuple[Handler, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "POST":
            return httpx.Response(303, headers={"location": "https://files.example.com/download/tok/g1"})
        return error(503, "service_unavailable", TOO_LONG)

    return handler, seen


@pytest.mark.parametrize("call", ["get", "upload", "links.create", "tus chunk", "download"])
def test_a_retry_after_over_60s_raises_at_once(flavour: str, call: str, tmp_path: Path) -> None:
    server = FakeServer()
    seen: list[httpx.Request] = []
    if call == "tus chunk":
        handler = _tus_refusing_chunks(server)
    elif call == "download":
        handler, seen = _grant_refusing_downloads()
    else:
        status, code = (503, "service_unavailable") if call == "upload" else (429, "rate_limited")
        handler, seen = sequence(error(status, code, TOO_LONG), created())
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.FileshareError) as caught:
        if call == "get":
            client.files.get(7)
        elif call == "upload":
            client.files.upload(b"hello")
        elif call == "links.create":
            client.links.create(7)
        elif call == "tus chunk":
            client.files.upload(bytes(100), resumable=True)
        else:
            client.download("https://files.example.com/download/tok", tmp_path / "a.bin")
    assert caught.value.retry_after == 120 and sleeps == []
    if call == "tus chunk":
        # One chunk, no HEAD to resume; the upload is given up (tus termination).
        assert [m for m, _ in server.calls] == ["OPTIONS", "POST", "PATCH", "DELETE"]
    elif call == "download":
        assert [r.method for r in seen] == ["POST", "GET"]
    else:
        assert len(seen) == 1
    if call in ("get", "links.create"):
        assert isinstance(caught.value, fileshare.RateLimitError)


def test_the_download_post_is_not_retried_after_a_500(flavour: str, tmp_path: Path) -> None:
    handler, seen = sequence(error(500, "internal_error"), httpx.Response(303, headers={"location": "/g"}))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.ServerError):
        client.download("https://files.example.com/download/tok", tmp_path / "a.bin")
    assert len(seen) == 1 and "idempotency-key" not in seen[0].headers  # the link's POST has no key


# -- replayed answers --------------------------------------------------------------------------


class EarlyAnswer(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Answers a multipart upload after reading only the first piece of its body, as a server that
    replays an idempotency key's stored answer may."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        self.requests = 0

    def _answer(self) -> httpx.Response:
        self.requests += 1
        return httpx.Response(201, json={"success": True, **self.record}, headers={"idempotent-replayed": "true"})

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, Iterable)
        for _ in request.stream:
            break
        return self._answer()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, AsyncIterable)
        pieces = request.stream.__aiter__()
        await pieces.__anext__()
        await pieces.aclose()  # type: ignore[attr-defined]
        return self._answer()


def _early(flavour: str, record: dict[str, Any]) -> tuple[Any, EarlyAnswer]:
    transport = EarlyAnswer(record)
    if flavour == "sync":
        return fileshare.Client(BASE, KEY, transport=transport), transport
    return BlockingAsync(fileshare.AsyncClient(BASE, KEY, transport=transport)), transport


def test_a_replay_answered_before_the_body_was_read_is_still_checked(flavour: str, tmp_path: Path) -> None:
    data = bytes(range(256)) * 8192  # 2 MiB: more than the piece the server read
    record = {**FILE, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    client, transport = _early(flavour, record)
    path = tmp_path / "a.bin"
    path.write_bytes(data)
    progress: list[tuple[int, int | None]] = []
    assert client.files.upload(path, idempotency_key="k3", on_progress=lambda s, t: progress.append((s, t))).sha256 == record["sha256"]
    assert client.files.upload(data, idempotency_key="k3").file_id == 7  # the source hashed apart
    assert progress[-1] == (len(data), len(data)) and transport.requests == 2

    # The key was first used for other bytes of the same length: the replayed file is not these bytes.
    other, _ = _early(flavour, {**record, "sha256": "e" * 64})
    with pytest.raises(fileshare.IntegrityError, match="replayed for the idempotency key") as caught:
        other.files.upload(data, idempotency_key="k3")
    assert caught.value.actual == record["sha256"]

    # A one-shot stream cannot be read again: the replayed record is returned as it is.
    stream, _ = _early(flavour, record)
    chunks = (data[i : i + 65536] for i in range(0, len(data), 65536))
    assert stream.files.upload(chunks, filename="s.bin", idempotency_key="k3").file_id == 7


def test_a_replayed_resumable_creation_continues_where_the_upload_stands(flavour: str) -> None:
    data = bytes(range(100))
    server = FakeServer()
    server.replay = True
    server.received += data[:50]  # what the key's first call sent before it died
    file = upload_with(flavour, server, data, {"resumable": True, "idempotency_key": "k4"}, chunk_size=40)
    assert file.sha256 == hashlib.sha256(data).hexdigest() and bytes(server.received) == data
    assert server.calls == [
        ("OPTIONS", "/api/v1/uploads"),
        ("POST", "/api/v1/uploads"),
        ("HEAD", FakeServer.UPLOAD),
        ("PATCH", FakeServer.UPLOAD),  # 50-90
        ("PATCH", FakeServer.UPLOAD),  # 90-100
        ("GET", FakeServer.UPLOAD),
    ]
    assert [h.get("upload-offset") for h in server.headers[3:5]] == ["50", "90"]
    assert [h.get("idempotency-key") for h in server.headers] == [None, "k4", None, None, None, None]

    # The first call finished it: nothing is sent again, the file is checked and returned.
    done = FakeServer()
    done.replay = True
    done.received += data
    assert upload_with(flavour, done, data, {"resumable": True, "idempotency_key": "k4"}).size == 100
    assert [m for m, _ in done.calls] == ["OPTIONS", "POST", "HEAD", "GET"]

    # The source is shorter than what the upload already holds: not this upload's source.
    short = FakeServer()
    short.replay = True
    short.received += data
    with pytest.raises(fileshare.FileshareError, match="source ended after 60 bytes"):
        upload_with(flavour, short, data[:60], {"resumable": True, "idempotency_key": "k4"})


def test_a_lost_creation_answer_is_asked_again_with_the_same_key(flavour: str) -> None:
    data = bytes(range(100))
    server = FakeServer()

    def handler(request: httpx.Request) -> httpx.Response:
        answer = server(request)
        if request.method == "POST" and not server.replay:
            server.replay = True  # created; the answer is lost on the way
            raise httpx.ReadError("dropped")
        return answer

    file = upload_with(flavour, handler, data, {"resumable": True}, chunk_size=64)
    assert file.size == 100 and bytes(server.received) == data
    assert [m for m, _ in server.calls] == ["OPTIONS", "POST", "POST", "HEAD", "PATCH", "PATCH", "GET"]
    posted = [h["idempotency-key"] for (m, _), h in zip(server.calls, server.headers) if m == "POST"]
    assert len(posted) == 2 and posted[0] == posted[1] and UUID4.fullmatch(posted[0])


@pytest.mark.parametrize(
    "own_key, failure, deleted",
    [
        (False, "dropped", True),  # nobody else knows the key: give the slot back
        (True, "dropped", False),  # kept for a later call with the key
        (True, "service_unavailable", False),
        (True, "storage_quota_exceeded", True),  # refused for good
    ],
)
def test_a_failed_resumable_upload_is_kept_only_for_the_callers_own_key(flavour: str, own_key: bool, failure: str, deleted: bool) -> None:
    server = FakeServer()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method in ("PATCH", "HEAD"):
            server.calls.append((request.method, request.url.path))
            if failure == "dropped":
                raise httpx.ReadError("dropped")
            return error(503 if failure == "service_unavailable" else 403, failure)
        return server(request)

    options: dict[str, Any] = {"resumable": True, "idempotency_key": "k5" if own_key else None}
    with pytest.raises(fileshare.FileshareError):
        upload_with(flavour, handler, bytes(100), options, max_retries=0)
    assert (("DELETE", FakeServer.UPLOAD) in server.calls) is deleted


# -- paging by before_id -----------------------------------------------------------------------


class FakeFiles:
    """An account's files behind ``GET /files`` (by page or ``before_id``) and ``DELETE /files/{id}``."""

    def __init__(self, ids: range) -> None:
        self.ids = sorted(ids, reverse=True)
        self.queries: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            self.ids.remove(int(request.url.path.rsplit("/", 1)[1]))
            return httpx.Response(200, json={"success": True})
        params = dict(request.url.params)
        self.queries.append(params)
        limit = int(params.get("limit", 20))
        if "before_id" in params:
            below = [i for i in self.ids if i < int(params["before_id"])]
            chosen, page = below[:limit], None
        else:
            page = int(params.get("page", 1))
            below = self.ids[(page - 1) * limit :]
            chosen = below[:limit]
        more = len(below) > limit
        pagination = {
            "page": page,
            "limit": limit,
            "total": len(self.ids),
            "pages": -(-len(self.ids) // limit),
            "next_before_id": chosen[-1] if more else None,
        }
        files = [{**FILE, "file_id": i} for i in chosen]
        return httpx.Response(200, json={"success": True, "files": files, "pagination": pagination})


def test_iterate_pages_by_before_id_so_deleting_while_iterating_skips_nothing(flavour: str) -> None:
    server = FakeFiles(range(1, 26))
    client, _ = make_either(flavour, server)
    deleted = []
    for file in client.files.iterate(limit=10):
        client.files.delete(file.file_id)
        deleted.append(file.file_id)
    assert deleted == list(range(25, 0, -1)) and server.ids == []
    assert server.queries == [{"limit": "10"}, {"limit": "10", "before_id": "16"}, {"limit": "10", "before_id": "6"}]


def test_list_by_before_id_and_its_pagination(flavour: str) -> None:
    server = FakeFiles(range(1, 26))
    client, _ = make_either(flavour, server)
    first = client.files.list(limit=10)
    assert (first.pagination.page, first.pagination.next_before_id) == (1, 16)
    second = client.files.list(limit=10, before_id=first.pagination.next_before_id)
    assert [f.file_id for f in second.files] == list(range(15, 5, -1))
    assert second.pagination == fileshare.Pagination(page=None, limit=10, total=25, pages=3, next_before_id=6)
    last = client.files.list(limit=10, before_id=6)
    assert len(last.files) == 5 and last.pagination.next_before_id is None
    # A server before issue 29: no next_before_id in its pagination.
    old = fileshare.Pagination.from_json({"page": 2, "limit": 10, "total": 25, "pages": 3})
    assert old.next_before_id is None and old.page == 2


def test_iterate_stops_on_a_server_whose_next_before_id_does_not_move(flavour: str) -> None:
    stuck = {"page": None, "limit": 2, "total": 9, "pages": 5, "next_before_id": 8}
    page = httpx.Response(200, json={"success": True, "files": [{**FILE, "file_id": 9}, {**FILE, "file_id": 8}], "pagination": stuck})
    handler, seen = sequence(page)
    client, _ = make_either(flavour, handler)
    yielded: list[int] = []
    with pytest.raises(fileshare.FileshareError, match="does not move past 8"):
        for file in client.files.iterate(limit=2):
            yielded.append(file.file_id)
    assert yielded == [9, 8] and len(seen) == 2  # the same page again: its files are not yielded twice


# -- the storage quota -------------------------------------------------------------------------


def test_stats_carry_the_quota_and_older_servers_parse_too(flavour: str) -> None:
    stats = {"total_files": 1, "total_size": 5, "total_downloads": 0, "uploads_today": 1, "storage_reserved": 1024}
    limits = {"max_file_size": 10, "daily_uploads": 3, "requests_per_minute": 10, "requests_per_day": 100, "max_storage": 4096}
    handler, _ = sequence(
        httpx.Response(200, json={"success": True, "stats": stats, "limits": limits, "plan": "pro"}),
        httpx.Response(200, json={"success": True, "stats": stats, "limits": {**limits, "max_storage": None}, "plan": "pro"}),
        httpx.Response(200, json={"success": True, "stats": {**stats, "storage_reserved": 0}, "limits": limits, "plan": "pro"}),
    )
    client, _ = make_either(flavour, handler)
    result = client.stats()
    assert (result.stats.total_size, result.stats.storage_reserved, result.limits.max_storage) == (5, 1024, 4096)
    assert result.stats.extra == {} and result.limits.extra == {}
    assert client.stats().limits.max_storage is None  # unlimited
    older = fileshare.StatsResult.from_json(
        {"stats": {k: v for k, v in stats.items() if k != "storage_reserved"}, "limits": {k: v for k, v in limits.items() if k != "max_storage"}}
    )
    assert older.stats.storage_reserved == 0 and older.limits.max_storage is None


def test_storage_quota_exceeded_is_a_limit_and_not_retried(flavour: str) -> None:
    handler, seen = sequence(error(403, "storage_quota_exceeded"), created())
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.LimitExceededError) as caught:
        client.files.upload(b"hello")
    assert (caught.value.status, caught.value.code) == (403, "storage_quota_exceeded")
    assert len(seen) == 1 and sleeps == []
