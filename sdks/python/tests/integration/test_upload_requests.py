"""Issue 34 against the real server, with both clients: client.upload_requests end to end (create with
every field, list, get, update, close, delete), the refusals (invalid_parameter per field, a key
without requests:manage, another account's request), and guests: uploads with
``Authorization: UploadRequest <token>`` (raw httpx, as a guest's browser does; with a password's
grant too) land in the account with source {type: upload_request, request_id}, the counters move,
the request turns full after max_files, a file with no room is 403 upload_request_full, the audit
log names the guest, and the webhook events upload_request.file_received and upload_request.full
arrive."""

from __future__ import annotations

import http.server
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator

import httpx
import pytest

import fileshare
from conftest import Factory
from helpers import guest_upload, token_of

DAY = 24 * 3600


def uploaded_file_id(response: httpx.Response) -> int:
    assert response.status_code == 201, (response.status_code, response.text)
    return int(response.headers["fileshare-file-id"])


def refusal(response: httpx.Response) -> fileshare.FileshareError:
    """The SDK's error for a guest's refused request."""
    return fileshare._errors.error_from_response(response.status_code, response.headers, response.content)


@pytest.fixture
def cleanup(make_client: Factory) -> Iterator[list[int]]:
    """request_ids to delete after the test (those still there)."""
    made: list[int] = []
    yield made
    client = make_client("pro")
    for request_id in made:
        try:
            client.upload_requests.delete(request_id)
        except fileshare.NotFoundError:
            pass


# -- the holder's calls ------------------------------------------------------------------------


def test_create_list_get_update_close_delete(make_client: Factory, cleanup: list[int], flavour: str) -> None:
    client = make_client("pro")
    expires_at = (datetime.now(timezone.utc) + timedelta(days=7)).replace(microsecond=0)
    raw = client.with_raw_response.upload_requests.create(
        label=f"Invoices for March ({flavour})",
        message="Please send the PDFs.\nThank you!",
        expires_at=expires_at,
        max_files=5,
        max_file_size=1024 * 1024,
        max_total_size=10 * 1024 * 1024,
        password="correct horse battery",
        file_expires_in=timedelta(days=1),
    )
    created = raw.parse()
    cleanup.append(created.request_id)
    assert raw.status_code == 201 and raw.headers["location"].endswith(f"/upload-requests/{created.request_id}")
    assert isinstance(created, fileshare.UploadRequest) and created.request_id > 0
    assert (created.label, created.message) == (f"Invoices for March ({flavour})", "Please send the PDFs.\nThank you!")
    assert created.expiry == expires_at and created.expires_at == expires_at.strftime("%Y-%m-%d %H:%M:%S")
    assert (created.max_files, created.max_file_size, created.max_total_size, created.file_expires_in) == (5, 1024 * 1024, 10 * 1024 * 1024, DAY)
    assert (created.password_protected, created.files_received, created.bytes_received, created.status) == (True, 0, 0, "active")
    assert created.files_left == 5 and abs(created.created - datetime.now(timezone.utc)) < timedelta(minutes=2)
    assert created.url.startswith(server_origin(client)) and "/r/" in created.url and len(token_of(created)) == 43
    assert created.extra == {}, f"fields this SDK does not know: {dict(created.extra)}"

    # the defaults: no message, no limits, no password
    plain = client.upload_requests.create(label="plain", expires_in=3600)
    cleanup.append(plain.request_id)
    assert (plain.message, plain.max_files, plain.max_file_size, plain.max_total_size, plain.file_expires_in) == (None, None, None, None, None)
    assert plain.password_protected is False and plain.files_left is None
    assert timedelta(minutes=58) < plain.expiry - datetime.now(timezone.utc) <= timedelta(hours=1, minutes=1)

    listed = client.upload_requests.list()
    ids = [r.request_id for r in listed]
    assert plain.request_id in ids and created.request_id in ids
    assert ids.index(plain.request_id) < ids.index(created.request_id)  # newest first
    assert [r for r in listed if r.request_id == created.request_id] == [created]
    assert client.upload_requests.get(created.request_id) == created

    changed = client.upload_requests.update(created.request_id, label="Invoices for April", message=None, max_files=None, password=None)
    assert (changed.label, changed.message, changed.max_files, changed.password_protected) == ("Invoices for April", None, None, False)
    assert (changed.max_file_size, changed.max_total_size, changed.file_expires_in, changed.url) == (created.max_file_size, created.max_total_size, DAY, created.url)
    longer = client.upload_requests.update(created.request_id, expires_in=timedelta(days=30), max_files=3, file_expires_in=None)
    assert (longer.max_files, longer.file_expires_in) == (3, None)
    assert timedelta(days=29) < longer.expiry - datetime.now(timezone.utc) <= timedelta(days=30, minutes=1)

    closed = client.upload_requests.close(created.request_id)
    assert closed.status == "closed" and closed.request_id == created.request_id
    assert client.upload_requests.close(created.request_id).status == "closed"  # idempotent
    assert client.upload_requests.update(created.request_id, expires_in=DAY).status == "closed"  # a closed one stays closed
    assert client.upload_requests.get(created.request_id).status == "closed"

    deleted = client.upload_requests.delete(plain.request_id)
    assert (deleted.request_id, deleted.label, deleted.status) == (plain.request_id, "plain", "closed")
    with pytest.raises(fileshare.NotFoundError):
        client.upload_requests.get(plain.request_id)
    assert plain.request_id not in [r.request_id for r in client.upload_requests.list()]
    with pytest.raises(fileshare.NotFoundError):
        client.upload_requests.delete(plain.request_id)


def server_origin(client: Any) -> str:
    inner = getattr(client, "client", client)
    return str(inner.base_url).removesuffix("/api/v1")


def _past() -> datetime:
    return datetime.now(timezone.utc) - timedelta(hours=1)


def _too_far() -> datetime:
    return datetime.now(timezone.utc) + timedelta(days=91)


INVALID: list[tuple[str, dict[str, Any]]] = [
    ("label", {"label": "", "expires_in": 3600}),
    ("label", {"label": "x" * 201, "expires_in": 3600}),
    ("label", {"label": "two\nlines", "expires_in": 3600}),
    ("message", {"label": "x", "message": "m" * 2001, "expires_in": 3600}),
    ("message", {"label": "x", "message": "bell\x07", "expires_in": 3600}),
    ("expires", {"label": "x"}),
    ("expires", {"label": "x", "expires_in": 3600, "expires_at": "2030-01-01 00:00:00"}),
    ("expires_in", {"label": "x", "expires_in": 0}),
    ("expires_in", {"label": "x", "expires_in": 7_776_001}),
    ("expires_at", {"label": "x", "expires_at": "past"}),
    ("expires_at", {"label": "x", "expires_at": "too far"}),
    ("max_files", {"label": "x", "expires_in": 3600, "max_files": 0}),
    ("max_files", {"label": "x", "expires_in": 3600, "max_files": 10_001}),
    ("max_file_size", {"label": "x", "expires_in": 3600, "max_file_size": 0}),
    ("max_file_size", {"label": "x", "expires_in": 3600, "max_file_size": "over the plan"}),
    ("max_total_size", {"label": "x", "expires_in": 3600, "max_total_size": 0}),
    ("password", {"label": "x", "expires_in": 3600, "password": "short"}),
    ("file_expires_in", {"label": "x", "expires_in": 3600, "file_expires_in": 0}),
    ("file_expires_in", {"label": "x", "expires_in": 3600, "file_expires_in": 315_360_001}),
]


def test_the_server_refuses_each_invalid_field(make_client: Factory, server: dict[str, Any]) -> None:
    client = make_client("pro", max_retries=0)
    before = {r.request_id for r in client.upload_requests.list()}
    plan_max = client.stats().limits.max_file_size
    for field, fields in INVALID:
        arguments = dict(fields)
        if arguments.get("expires_at") == "past":
            arguments["expires_at"] = _past()
        elif arguments.get("expires_at") == "too far":
            arguments["expires_at"] = _too_far()
        if arguments.get("max_file_size") == "over the plan":
            arguments["max_file_size"] = plan_max + 1
        with pytest.raises(fileshare.BadRequestError) as caught:
            client.upload_requests.create(**arguments)
        assert (caught.value.status, caught.value.code) == (400, "invalid_parameter"), (field, caught.value)
        assert field in caught.value.message, (field, caught.value.message)

    # what the SDK cannot send: an unknown field, a label or an expiry set to null
    made = client.upload_requests.create(label="kept", expires_in=3600)
    try:
        headers = {"authorization": f"Bearer {server['keys']['pro']}", "content-type": "application/json"}
        base = server["base_url"]
        unknown = httpx.post(f"{base}/upload-requests", headers=headers, json={"label": "x", "expires_in": 60, "colour": "red"})
        assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "invalid_parameter") and "colour" in unknown.text
        for field in ("label", "expires_at", "expires_in"):
            nulled = httpx.patch(f"{base}/upload-requests/{made.request_id}", headers=headers, json={field: None})
            assert (nulled.status_code, nulled.json()["error"]["code"]) == (400, "invalid_parameter"), (field, nulled.text)
        with pytest.raises(fileshare.BadRequestError) as caught:
            client.upload_requests.update(made.request_id, max_files=0)
        assert caught.value.code == "invalid_parameter" and "max_files" in caught.value.message
        assert client.upload_requests.get(made.request_id) == made  # nothing changed
    finally:
        client.upload_requests.delete(made.request_id)
    assert {r.request_id for r in client.upload_requests.list()} == before  # no refused create made one


def test_a_key_without_requests_manage_and_another_account(make_client: Factory, server: dict[str, Any], other_key: str, cleanup: list[int]) -> None:
    read_only = make_client(None, api_key=server["keys"]["read_only"], max_retries=0)
    calls: list[Callable[[], Any]] = [
        read_only.upload_requests.list,
        lambda: read_only.upload_requests.create(label="x", expires_in=3600),
        lambda: read_only.upload_requests.get(1),
        lambda: read_only.upload_requests.files(1),
    ]
    for call in calls:
        with pytest.raises(fileshare.InsufficientScopeError) as scoped:
            call()
        assert (scoped.value.status, scoped.value.required_scope) == (403, "requests:manage")

    mine = make_client("pro").upload_requests.create(label="mine", expires_in=3600)
    cleanup.append(mine.request_id)
    other = make_client(None, api_key=other_key, max_retries=0)
    for call in [
        lambda: other.upload_requests.get(mine.request_id),
        lambda: other.upload_requests.update(mine.request_id, label="theirs"),
        lambda: other.upload_requests.close(mine.request_id),
        lambda: other.upload_requests.delete(mine.request_id),
        lambda: other.upload_requests.files(mine.request_id),
    ]:
        with pytest.raises(fileshare.NotFoundError):
            call()
    assert mine.request_id not in [r.request_id for r in other.upload_requests.list()]
    assert make_client("pro").upload_requests.get(mine.request_id) == mine


# -- guests ------------------------------------------------------------------------------------


class Receiver:
    """An HTTP server on 127.0.0.1 that answers 200 to every POST and keeps the bodies and headers."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, httpx.Headers, bytes]] = []
        self.changed = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()
                with receiver.changed:
                    receiver.messages.append((self.path, httpx.Headers(list(self.headers.items())), body))
                    receiver.changed.notify_all()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(
        self, path: str, webhooks: fileshare.Webhooks, test: Callable[[dict[str, Any]], bool], count: int, timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """The first ``count`` events sent to ``path`` that ``webhooks`` verifies and ``test`` accepts."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                sent = [webhooks.verify(body, headers) for at, headers, body in self.messages if at == path]
                found = [e for e in sent if test(e)]
                if len(found) >= count:
                    return found[:count]
                left = deadline - time.monotonic()
                assert left > 0, f"{count} event(s) expected at {path}; got {[e['type'] for e in sent]}"
                self.changed.wait(left)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


def test_guest_uploads_land_in_the_account(make_client: Factory, server: dict[str, Any], cleanup: list[int], receiver: Receiver, flavour: str) -> None:
    client = make_client("pro")
    path = f"/hooks/{flavour}"
    hook = client.webhooks.create(url=receiver.url + path, events=["upload_request.file_received", "upload_request.full"])
    assert hook.secret is not None
    webhooks = fileshare.Webhooks(hook.secret)
    request = client.upload_requests.create(label=f"two files ({flavour})", expires_in=3600, max_files=2, file_expires_in=DAY)
    cleanup.append(request.request_id)
    token = token_of(request)
    file_ids: list[int] = []
    try:
        first = uploaded_file_id(guest_upload(server, token, b"hello", "hello.txt"))
        file_ids.append(first)
        now = client.upload_requests.get(request.request_id)
        assert (now.files_received, now.bytes_received, now.status, now.files_left) == (1, 5, "active", 1)

        page = client.upload_requests.files(request.request_id)
        assert [f.file_id for f in page.files] == [first] and page.pagination.next_before_id is None
        [got] = page.files
        assert (got.filename, got.size, got.source) == ("hello.txt", 5, fileshare.FileSource("upload_request", request.request_id))
        assert got.expires_at is not None and timedelta(hours=23) < got.expiry - datetime.now(timezone.utc) <= timedelta(days=1, minutes=1)
        in_account = client.files.get(first)
        assert in_account == got and in_account.source == got.source
        assert in_account.to_dict()["source"] == {"type": "upload_request", "request_id": request.request_id}

        second = uploaded_file_id(guest_upload(server, token, b"world!", "world.txt"))
        file_ids.append(second)
        full = client.upload_requests.get(request.request_id)
        assert (full.files_received, full.bytes_received, full.status, full.files_left) == (2, 11, "full", 0)
        assert [f.file_id for f in client.upload_requests.iterate_files(request.request_id, limit=1)] == [second, first]
        one = client.upload_requests.files(request.request_id, limit=1)
        assert [f.file_id for f in one.files] == [second] and one.pagination.next_before_id == second
        older = client.upload_requests.files(request.request_id, limit=1, before_id=second)
        assert [f.file_id for f in older.files] == [first] and older.pagination.next_before_id is None

        # a full request's token is dead
        dead = guest_upload(server, token, b"third", "third.txt")
        assert isinstance(refusal(dead), fileshare.AuthenticationError) and refusal(dead).code == "unauthorized"
        assert client.upload_requests.get(request.request_id).files_received == 2

        # the holder's own uploads say so
        mine = client.files.upload(b"mine", filename="mine.txt")
        file_ids.append(mine.file_id)
        assert mine.source == fileshare.FileSource("api") and client.files.get(mine.file_id) == mine

        # the audit log names the guest
        audit = client.audit_events.list(action="file.uploaded", limit=10)
        [by_guest] = [e for e in audit.events if e.target is not None and e.target.id == first]
        assert (by_guest.actor.type, by_guest.actor.id) == ("guest", request.request_id)
        actions = {e.action for e in client.audit_events.iterate(action="upload_request.*", limit=100) if e.target is None or e.target.id == request.request_id}
        assert "upload_request.created" in actions

        # the webhook events
        def of_this(kind: str) -> Callable[[dict[str, Any]], bool]:
            return lambda e: bool(e["type"] == kind and e["data"]["request_id"] == request.request_id)

        received = receiver.events(path, webhooks, of_this("upload_request.file_received"), count=2)
        by_file = {e["data"]["file"]["file_id"]: e["data"] for e in received}
        assert set(by_file) == {first, second}
        assert (by_file[first]["label"], by_file[first]["files_received"], by_file[first]["bytes_received"]) == (request.label, 1, 5)
        assert fileshare.FileRecord.from_json(by_file[second]["file"]).source == fileshare.FileSource("upload_request", request.request_id)
        [full_event] = receiver.events(path, webhooks, of_this("upload_request.full"), count=1)
        assert full_event["data"] == {"request_id": request.request_id, "label": request.label, "files_received": 2, "bytes_received": 11}

        # deleting the request keeps its files
        client.upload_requests.delete(request.request_id)
        assert client.files.get(first).source == fileshare.FileSource("upload_request", request.request_id)
    finally:
        client.webhooks.delete(hook.webhook_id)
        for file_id in file_ids:
            client.files.delete(file_id)


def test_no_room_a_password_and_dead_tokens(make_client: Factory, server: dict[str, Any], cleanup: list[int]) -> None:
    client = make_client("pro")
    request = client.upload_requests.create(label="eight bytes", expires_in=3600, max_total_size=8, password="open sesame!")
    cleanup.append(request.request_id)
    token = token_of(request)
    file_ids: list[int] = []
    try:
        # without the grant a protected request takes nothing; a wrong password gets none
        assert guest_upload(server, token, b"hello", "a.txt").status_code in (401, 403)
        wrong = httpx.post(f"{request.url}/grant", json={"password": "not it at all"})
        assert (wrong.status_code, wrong.json()["error"]["code"]) == (401, "invalid_password")
        granted = httpx.post(f"{request.url}/grant", json={"password": "open sesame!"})
        assert granted.status_code == 200 and granted.json()["success"] is True, granted.text
        grant = granted.json()["grant"]
        assert isinstance(grant, str) and granted.json()["expires_at"]

        file_ids.append(uploaded_file_id(guest_upload(server, token, b"hello", "a.txt", grant)))
        no_room = guest_upload(server, token, b"world", "b.txt", grant)  # 5 + 5 > 8
        error = refusal(no_room)
        assert isinstance(error, fileshare.LimitExceededError), (no_room.status_code, no_room.text)
        assert (error.status, error.code) == (403, "upload_request_full")
        now = client.upload_requests.get(request.request_id)
        assert (now.files_received, now.bytes_received, now.status) == (1, 5, "active")
        file_ids.append(uploaded_file_id(guest_upload(server, token, b"abc", "c.txt", grant)))
        assert client.upload_requests.get(request.request_id).status == "full"

        # a guest's token works on the tus endpoint alone, and a closed request's token is dead
        elsewhere = httpx.get(f"{server['base_url']}/files", headers={"authorization": f"UploadRequest {token}"})
        assert elsewhere.status_code == 401
        client.upload_requests.update(request.request_id, max_total_size=None)
        assert client.upload_requests.get(request.request_id).status == "active"
        client.upload_requests.close(request.request_id)
        closed = guest_upload(server, token, b"late", "d.txt", grant)
        assert closed.status_code == 401 and refusal(closed).code == "unauthorized"
        unknown = guest_upload(server, "u" * 43, b"late", "e.txt")
        assert unknown.status_code == 401 and refusal(unknown).code == "unauthorized"
        assert [f.file_id for f in client.upload_requests.iterate_files(request.request_id)] == sorted(file_ids, reverse=True)
    finally:
        for file_id in file_ids:
            client.files.delete(file_id)
