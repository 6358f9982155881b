"""Unit tests of client.upload_requests (issue 34) with httpx.MockTransport, sync and async: what each
call sends (explicit null vs left out, durations and instants, the idempotency key of create), what
is retried, the errors of the sheet (invalid_parameter, not_found, insufficient_scope,
upload_request_full), files by page and iterate_files by next_before_id, the UploadRequest record,
the file record's source, and the raw responses."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Callable
from urllib.parse import parse_qsl

import httpx
import pytest

import fileshare
from mock_api import FILE, error, make, make_either, sequence

REQUEST: dict[str, Any] = {
    "request_id": 12,
    "url": "https://files.example.com/r/" + "t" * 43,
    "label": "Invoices for March",
    "message": "Please send the PDFs.\nThanks!",
    "expires_at": "2026-12-04 10:00:00",
    "max_files": 5,
    "max_file_size": 1048576,
    "max_total_size": None,
    "file_expires_in": 86400,
    "password_protected": False,
    "files_received": 2,
    "bytes_received": 10,
    "status": "active",
    "created_at": "2026-11-27 10:00:00",
}


def received(file_id: int, request_id: int = 12) -> dict[str, Any]:
    return {**FILE, "file_id": file_id, "source": {"type": "upload_request", "request_id": request_id}}


def answer(status: int = 200, headers: dict[str, str] | None = None, **body: Any) -> httpx.Response:
    return httpx.Response(status, json={"success": True, **body}, headers=headers)


def sent(request: httpx.Request) -> tuple[str, str, Any]:
    """Method, path (with its query) and JSON body (None without a body) of a request."""
    body = json.loads(request.content) if request.content else None
    if body is not None:
        assert request.headers["content-type"] == "application/json"
    query = f"?{request.url.query.decode()}" if request.url.query else ""
    return request.method, request.url.path + query, body


# -- what the calls send -----------------------------------------------------------------------


def test_every_call_sends_what_the_sheet_says(flavour: str) -> None:
    closed = {**REQUEST, "status": "closed"}
    handler, seen = sequence(
        answer(201, {"location": "/api/v1/upload-requests/12"}, upload_request=REQUEST),
        answer(upload_requests=[REQUEST, {**REQUEST, "request_id": 11, "status": "expired"}]),
        answer(upload_request=REQUEST),
        answer(upload_request={**REQUEST, "label": "April"}),
        answer(upload_request=closed),
        answer(upload_request=closed),
        answer(files=[received(9), received(8)], pagination={"limit": 20, "next_before_id": None}),
    )
    client, _ = make_either(flavour, handler)
    created = client.upload_requests.create(label="Invoices for March", expires_in=timedelta(days=7), max_files=5)
    assert created == fileshare.UploadRequest.from_json(REQUEST)
    listed = client.upload_requests.list()
    assert [(r.request_id, r.status) for r in listed] == [(12, "active"), (11, "expired")]
    assert client.upload_requests.get(12) == created
    assert client.upload_requests.update("12", label="April").label == "April"
    assert client.upload_requests.close(12).status == "closed"
    deleted = client.upload_requests.delete(12)
    assert (deleted.request_id, deleted.status) == (12, "closed")
    page = client.upload_requests.files(12)
    assert [f.file_id for f in page.files] == [9, 8] and page.pagination.next_before_id is None
    assert page.files[0].source == fileshare.FileSource("upload_request", 12)
    assert [sent(r) for r in seen] == [
        ("POST", "/api/v1/upload-requests", {"label": "Invoices for March", "expires_in": 604800, "max_files": 5}),
        ("GET", "/api/v1/upload-requests", None),
        ("GET", "/api/v1/upload-requests/12", None),
        ("PATCH", "/api/v1/upload-requests/12", {"label": "April"}),
        ("POST", "/api/v1/upload-requests/12/close", None),
        ("DELETE", "/api/v1/upload-requests/12", None),
        ("GET", "/api/v1/upload-requests/12/files", None),
    ]
    assert all(r.headers["authorization"].startswith("Bearer fsk_") for r in seen)
    assert "idempotency-key" in seen[0].headers and all("idempotency-key" not in r.headers for r in seen[1:])


def test_create_sends_every_field_given_and_leaves_out_the_rest(flavour: str) -> None:
    handler, seen = sequence(answer(201, upload_request=REQUEST))
    client, _ = make_either(flavour, handler)
    client.upload_requests.create(
        label="CVs",
        message="Hello\nthere",
        expires_at=datetime(2026, 12, 4, 11, 0, tzinfo=timezone(timedelta(hours=1))),
        max_files=3,
        max_file_size=1000,
        max_total_size=2000,
        password="correct horse",
        file_expires_in=timedelta(hours=1),
    )
    client.upload_requests.create(label="only", expires_at="2026-12-04 10:00:00", message=None, file_expires_in=60)
    assert [sent(r)[2] for r in seen] == [
        {
            "label": "CVs",
            "message": "Hello\nthere",
            "expires_at": "2026-12-04 10:00:00",
            "max_files": 3,
            "max_file_size": 1000,
            "max_total_size": 2000,
            "password": "correct horse",
            "file_expires_in": 3600,
        },
        {"label": "only", "expires_at": "2026-12-04 10:00:00", "file_expires_in": 60},
    ]


def test_update_sends_only_the_arguments_given_and_none_removes(flavour: str) -> None:
    handler, seen = sequence(answer(upload_request=REQUEST))
    client, _ = make_either(flavour, handler)
    client.upload_requests.update(12, message=None, max_files=None, max_file_size=None, max_total_size=None, password=None, file_expires_in=None)
    client.upload_requests.update(12, expires_in=3600, max_files=10, password="new password", file_expires_in=timedelta(days=1))
    client.upload_requests.update(12, expires_at=datetime(2026, 12, 24, tzinfo=timezone.utc))
    client.upload_requests.update(12)
    assert [sent(r)[2] for r in seen] == [
        {"message": None, "max_files": None, "max_file_size": None, "max_total_size": None, "password": None, "file_expires_in": None},
        {"expires_in": 3600, "max_files": 10, "password": "new password", "file_expires_in": 86400},
        {"expires_at": "2026-12-24 00:00:00"},
        {},
    ]


def test_a_naive_datetime_is_refused_before_anything_is_sent(flavour: str) -> None:
    handler, seen = sequence(answer(201, upload_request=REQUEST))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.ConfigurationError, match="aware datetime"):
        client.upload_requests.create(label="x", expires_at=datetime(2026, 12, 4))
    with pytest.raises(fileshare.ConfigurationError, match="number of seconds"):
        client.upload_requests.create(label="x", expires_in=1, file_expires_in="1d")
    assert seen == []


@pytest.mark.parametrize("bad", [0, -1, "3a", "", True, "../files"])
def test_ids_are_checked_before_anything_is_sent(flavour: str, bad: Any) -> None:
    handler, seen = sequence(answer(upload_request=REQUEST))
    client, _ = make_either(flavour, handler)
    calls: list[Callable[[], Any]] = [
        lambda: client.upload_requests.get(bad),
        lambda: client.upload_requests.update(bad, label="x"),
        lambda: client.upload_requests.delete(bad),
        lambda: client.upload_requests.close(bad),
        lambda: client.upload_requests.files(bad),
        lambda: list(client.upload_requests.iterate_files(bad)),
    ]
    for call in calls:
        with pytest.raises(fileshare.ConfigurationError, match="upload request id is a positive integer"):
            call()
    assert seen == []


# -- retries -----------------------------------------------------------------------------------


def test_create_sends_one_idempotency_key_on_every_attempt(flavour: str) -> None:
    handler, seen = sequence(httpx.ConnectError("dropped"), error(503, "unavailable"), answer(201, upload_request=REQUEST))
    client, sleeps = make_either(flavour, handler)
    assert client.upload_requests.create(label="x", expires_in=60).request_id == 12
    keys = {r.headers["idempotency-key"] for r in seen}
    assert len(seen) == 3 and len(sleeps) == 2 and len(keys) == 1
    uuid.UUID(keys.pop())
    handler, seen = sequence(answer(201, upload_request=REQUEST))
    client, _ = make_either(flavour, handler)
    client.upload_requests.create(label="x", expires_in=60, idempotency_key="march-invoices")
    assert seen[0].headers["idempotency-key"] == "march-invoices"
    with pytest.raises(fileshare.ConfigurationError, match="idempotency_key"):
        client.upload_requests.create(label="x", expires_in=60, idempotency_key="")


@pytest.mark.parametrize("call", ["list", "get", "update", "delete", "close", "files"])
def test_every_other_call_is_retried_as_a_read(flavour: str, call: str) -> None:
    ok = answer(upload_request=REQUEST, upload_requests=[REQUEST], files=[], pagination={"limit": 20, "next_before_id": None})
    handler, seen = sequence(error(502, "bad_gateway"), httpx.ReadTimeout("slow"), ok)
    client, sleeps = make_either(flavour, handler, max_retries=3)
    args = () if call == "list" else (12,)
    getattr(client.upload_requests, call)(*args)
    assert len(seen) == 3 and len(sleeps) == 2 and all("idempotency-key" not in r.headers for r in seen)


# -- errors ------------------------------------------------------------------------------------


def test_the_errors_of_the_sheet(flavour: str) -> None:
    cases: list[tuple[httpx.Response, type[fileshare.FileshareError], str]] = [
        (error(400, "invalid_parameter"), fileshare.BadRequestError, "invalid_parameter"),
        (error(404, "not_found"), fileshare.NotFoundError, "not_found"),
        (error(403, "upload_request_full"), fileshare.LimitExceededError, "upload_request_full"),
        (error(403, "insufficient_scope"), fileshare.InsufficientScopeError, "insufficient_scope"),
    ]
    for response, kind, code in cases:
        handler, seen = sequence(response, answer(201, upload_request=REQUEST))
        client, sleeps = make_either(flavour, handler)
        with pytest.raises(kind) as caught:
            client.upload_requests.create(label="x", expires_in=60)
        assert (caught.value.code, caught.value.request_id) == (code, "req-1")
        assert len(seen) == 1 and sleeps == []


def test_upload_request_full_is_a_limit() -> None:
    found = fileshare._errors.error_from_response(
        403, httpx.Headers(), json.dumps({"success": False, "error": {"code": "upload_request_full", "message": "no room"}}).encode()
    )
    assert isinstance(found, fileshare.LimitExceededError) and not isinstance(found, fileshare.PermissionDeniedError)
    assert str(found) == "403 upload_request_full: no room"


def test_a_key_without_requests_manage(flavour: str) -> None:
    refusal = httpx.Response(
        403,
        json={"success": False, "error": {"code": "insufficient_scope", "message": "lacks requests:manage", "required_scope": "requests:manage"}},
        headers={"www-authenticate": 'Bearer error="insufficient_scope", scope="requests:manage"'},
    )
    handler, seen = sequence(refusal)
    client, _ = make_either(flavour, handler)
    calls: list[Callable[[], Any]] = [
        client.upload_requests.list,
        lambda: client.upload_requests.close(3),
        lambda: list(client.upload_requests.iterate_files(3)),
    ]
    for call in calls:
        with pytest.raises(fileshare.InsufficientScopeError) as caught:
            call()
        assert caught.value.required_scope == "requests:manage"
    assert len(seen) == 3


def test_answers_without_what_was_asked_are_errors(flavour: str) -> None:
    handler, _ = sequence(answer(upload_requests={"not": "a list"}), answer(), answer(files=[]), answer(upload_request={"request_id": 1}))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.FileshareError, match="no list of upload requests"):
        client.upload_requests.list()
    with pytest.raises(fileshare.FileshareError, match="no upload request object"):
        client.upload_requests.get(3)
    with pytest.raises(fileshare.FileshareError, match="no list of the upload request's files"):
        client.upload_requests.files(3)
    with pytest.raises(fileshare.FileshareError, match="upload request object lacks url"):
        client.upload_requests.close(3)


# -- files -------------------------------------------------------------------------------------


class FakeFiles:
    """``GET /upload-requests/12/files`` over files 1..n (newest first), by ``before_id``."""

    def __init__(self, ids: range) -> None:
        self.ids = sorted(ids, reverse=True)
        self.queries: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert (request.method, request.url.path) == ("GET", "/api/v1/upload-requests/12/files")
        query = dict(parse_qsl(request.url.query.decode()))
        self.queries.append(query)
        limit = int(query.get("limit", "20"))
        below = int(query["before_id"]) if "before_id" in query else None
        chosen = [i for i in self.ids if below is None or i < below][:limit]
        more = bool(chosen) and any(i < chosen[-1] for i in self.ids)
        pagination = {"limit": limit, "next_before_id": chosen[-1] if more else None}
        return answer(files=[received(i) for i in chosen], pagination=pagination)


def test_files_sends_only_the_paging_given(flavour: str) -> None:
    server = FakeFiles(range(1, 8))
    client, _ = make_either(flavour, server)
    page = client.upload_requests.files(12, limit=3, before_id=6)
    assert server.queries == [{"limit": "3", "before_id": "6"}]
    assert [f.file_id for f in page.files] == [5, 4, 3]
    assert page.pagination == fileshare.UploadRequestFilePagination(limit=3, next_before_id=3)
    assert all(isinstance(f, fileshare.FileRecord) for f in page.files)


def test_iterate_files_pages_by_next_before_id(flavour: str) -> None:
    server = FakeFiles(range(1, 26))
    client, _ = make_either(flavour, server)
    assert [f.file_id for f in client.upload_requests.iterate_files(12, limit=10)] == list(range(25, 0, -1))
    assert server.queries == [{"limit": "10"}, {"limit": "10", "before_id": "16"}, {"limit": "10", "before_id": "6"}]
    server = FakeFiles(range(0))
    client, _ = make_either(flavour, server)
    assert list(client.upload_requests.iterate_files(12)) == [] and server.queries == [{"limit": "100"}]


def test_iterate_files_stops_on_a_server_whose_next_before_id_does_not_move(flavour: str) -> None:
    page = answer(files=[received(9), received(8)], pagination={"limit": 2, "next_before_id": 8})
    handler, seen = sequence(page)
    client, _ = make_either(flavour, handler)
    yielded: list[int] = []
    with pytest.raises(fileshare.FileshareError, match="does not move past 8"):
        for item in client.upload_requests.iterate_files(12, limit=2):
            yielded.append(item.file_id)
    assert yielded == [9, 8] and len(seen) == 2


# -- the records -------------------------------------------------------------------------------


def test_the_upload_request_record() -> None:
    record = fileshare.UploadRequest.from_json({**REQUEST, "success": True, "guest_page": "v2"})
    assert record.extra == {"guest_page": "v2"} and record.to_dict() == {**REQUEST, "guest_page": "v2"}
    assert json.loads(record.to_json()) == {**REQUEST, "guest_page": "v2"}
    assert record.created == datetime(2026, 11, 27, 10, 0, tzinfo=timezone.utc)
    assert record.expiry == datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc)
    assert (record.files_left, record.message, record.max_total_size) == (3, "Please send the PDFs.\nThanks!", None)
    assert fileshare.UploadRequest.from_json({**REQUEST, "max_files": None}).files_left is None
    assert fileshare.UploadRequest.from_json({**REQUEST, "files_received": 7}).files_left == 0
    with pytest.raises(fileshare.FileshareError, match="lacks status, created_at"):
        fileshare.UploadRequest.from_json({k: v for k, v in REQUEST.items() if k not in ("status", "created_at")})
    with pytest.raises(AttributeError):
        record.status = "closed"  # type: ignore[misc]


def test_the_file_record_has_its_source() -> None:
    guest = fileshare.FileRecord.from_json(received(7, 12))
    assert guest.source == fileshare.FileSource(type="upload_request", request_id=12)
    assert guest.to_dict() == {**received(7, 12), "expires_at": None, "scan": None}
    api = fileshare.FileRecord.from_json({**FILE, "source": {"type": "api"}})
    assert api.source is not None and (api.source.type, api.source.request_id) == ("api", None)
    assert api.to_dict() == {**FILE, "expires_at": None, "scan": None, "source": {"type": "api"}}  # no request_id: none was sent
    assert fileshare.FileRecord.from_json({**FILE, "source": {"type": "dashboard"}}).source == fileshare.FileSource("dashboard")
    older = fileshare.FileRecord.from_json(FILE)  # a server before upload requests
    assert older.source is None and older.to_dict() == {**FILE, "expires_at": None, "scan": None}
    future = fileshare.FileRecord.from_json({**FILE, "source": {"type": "import", "batch": 3}})
    assert future.source is not None and future.source.extra == {"batch": 3}
    assert future.to_dict()["source"] == {"type": "import", "batch": 3}
    with pytest.raises(fileshare.FileshareError, match="file source lacks type"):
        fileshare.FileRecord.from_json({**FILE, "source": {"request_id": 3}})


def test_an_upload_request_webhook_payload_parses() -> None:
    data: dict[str, Any] = {"request_id": 12, "label": "Invoices", "files_received": 1, "bytes_received": 5, "file": received(7)}
    file = fileshare.FileRecord.from_json(data["file"])
    assert file.source is not None and file.source.request_id == data["request_id"]


# -- raw responses and names -------------------------------------------------------------------


def test_raw_responses_of_the_upload_request_calls(flavour: str) -> None:
    handler, _ = sequence(
        answer(201, {"location": "/api/v1/upload-requests/12", "x-request-id": "req-u"}, upload_request=REQUEST),
        answer(upload_request={**REQUEST, "status": "closed"}),
        answer(files=[received(2)], pagination={"limit": 1, "next_before_id": None}),
    )
    client, _ = make_either(flavour, handler)
    raw = client.with_raw_response.upload_requests.create(label="x", expires_in=60)
    assert (raw.status_code, raw.headers["location"], raw.request_id) == (201, "/api/v1/upload-requests/12", "req-u")
    assert raw.parse().request_id == 12
    assert client.with_raw_response.upload_requests.close(12).parse().status == "closed"
    assert client.with_raw_response.upload_requests.files(12, limit=1).parse().files[0].file_id == 2


def test_with_options_keeps_upload_requests() -> None:
    handler, seen = sequence(answer(upload_requests=[]))
    client, _ = make(handler)
    assert client.with_options(max_retries=0).upload_requests.list() == []
    assert client.upload_requests.list(extra_headers={"x-trace": "1"}) == [] and seen[-1].headers["x-trace"] == "1"


def test_the_new_names_are_exported() -> None:
    names = ("UploadRequest", "UploadRequestFileList", "UploadRequestFilePagination", "FileSource", "UploadRequests", "AsyncUploadRequests")
    for name in names:
        assert name in fileshare.__all__ and hasattr(fileshare, name)
    handler, _ = sequence(answer(upload_requests=[]))
    assert isinstance(make(handler)[0].upload_requests, fileshare.UploadRequests)
    assert isinstance(fileshare.AsyncClient("https://f.example/api/v1", "fsk_x").upload_requests, fileshare.AsyncUploadRequests)
