"""Unit tests of links (issue 28) with httpx.MockTransport: what each call sends (explicit null vs
left out), the Link record, file expiry, and download's POST-and-grant flow (one POST, resumes
through the grant, what is retried and what is not)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

import fileshare
from fileshare._common import GRANT_REUSE, Grants
from helpers import BlockingAsync
from mock_api import BASE, FILE, KEY, error, make_either, sequence

LINK: dict[str, Any] = {
    "link_id": 12,
    "file_id": 7,
    "url": "https://files.example.com/download/tok2",
    "default": False,
    "label": "for the auditors",
    "expires_at": "2026-12-01 00:00:00",
    "max_downloads": 3,
    "download_count": 1,
    "password_protected": True,
    "status": "active",
    "created_at": "2026-11-27 10:00:00",
}


def answer(status: int = 200, **body: Any) -> httpx.Response:
    return httpx.Response(status, json={"success": True, **body})


def sent(request: httpx.Request) -> tuple[str, str, Any]:
    """Method, path and JSON body (None when there was no body) of a request."""
    body = json.loads(request.content) if request.content else None
    if body is not None:
        assert request.headers["content-type"] == "application/json"
    return request.method, request.url.path, body


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- what the calls send -----------------------------------------------------------------------


def test_links_calls_send_only_the_arguments_given(flavour: str) -> None:
    handler, seen = sequence(
        answer(201, link=LINK),
        answer(201, link=LINK),
        answer(201, link=LINK),
        answer(links=[{**LINK, "default": True}, LINK]),
        answer(link=LINK),
        answer(link=LINK),
        answer(link=LINK),
        answer(message="revoked"),
        answer(link={**LINK, "url": "https://files.example.com/download/tok3"}),
    )
    client, _ = make_either(flavour, handler)
    created = client.links.create(7, label="for the auditors", expires_in=timedelta(hours=1), max_downloads=3, password="s3cret-pass")
    assert created == fileshare.Link.from_json(LINK)
    client.links.create("7")
    paris = timezone(timedelta(hours=1))
    client.links.create(7, expires_at=datetime(2026, 12, 1, 1, 0, 0, tzinfo=paris), label=None)
    links = client.links.list(7)
    assert [link.default for link in links] == [True, False]
    assert client.links.get(12).label == "for the auditors"
    client.links.update(12, label=None, max_downloads=5)
    client.links.update(12, expires_at="2027-01-01 00:00:00", password=None)
    assert client.links.delete(12) is None
    assert client.links.rotate(12).url.endswith("/tok3")
    assert [sent(r) for r in seen] == [
        ("POST", "/api/v1/files/7/links", {"label": "for the auditors", "expires_in": 3600, "max_downloads": 3, "password": "s3cret-pass"}),
        ("POST", "/api/v1/files/7/links", {}),
        ("POST", "/api/v1/files/7/links", {"expires_at": "2026-12-01 00:00:00"}),  # UTC; None on create: not sent
        ("GET", "/api/v1/files/7/links", None),
        ("GET", "/api/v1/links/12", None),
        ("PATCH", "/api/v1/links/12", {"label": None, "max_downloads": 5}),  # None clears; the rest is left out
        ("PATCH", "/api/v1/links/12", {"expires_at": "2027-01-01 00:00:00", "password": None}),
        ("DELETE", "/api/v1/links/12", None),
        ("POST", "/api/v1/links/12/rotate", None),
    ]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in seen)


def test_files_update(flavour: str) -> None:
    updated = {**FILE, "filename": "b.txt", "expires_at": "2026-12-01 00:00:00"}
    handler, seen = sequence(answer(file=updated))
    client, _ = make_either(flavour, handler)
    file = client.files.update(7, expires_in=60, filename="b.txt")
    assert file.expiry == datetime(2026, 12, 1, tzinfo=timezone.utc) and file.filename == "b.txt"
    client.files.update(7, expires_at=None)
    client.files.update(7)
    assert [sent(r) for r in seen] == [
        ("PATCH", "/api/v1/files/7", {"expires_in": 60, "filename": "b.txt"}),
        ("PATCH", "/api/v1/files/7", {"expires_at": None}),
        ("PATCH", "/api/v1/files/7", {}),
    ]


def test_arguments_the_sdk_refuses_before_sending() -> None:
    handler, seen = sequence(answer(link=LINK))
    client, _ = make_either("sync", handler)
    with pytest.raises(fileshare.ConfigurationError, match="aware datetime"):
        client.links.create(7, expires_at=datetime(2026, 12, 1))
    with pytest.raises(fileshare.ConfigurationError, match="seconds"):
        client.links.update(12, expires_in="1d")
    with pytest.raises(fileshare.ConfigurationError, match="a link id is a positive integer"):
        client.links.get("12/rotate")
    with pytest.raises(fileshare.ConfigurationError, match="a file id is a positive integer"):
        client.links.list(0)
    assert seen == []


def test_upload_sends_fileshare_expires_in_multipart() -> None:
    handler, seen = sequence(httpx.Response(201, json={"success": True, **FILE, "expires_at": "2026-11-29 00:17:19"}))
    client, _ = make_either("sync", handler)
    file = client.files.upload(b"hello", expires_in=timedelta(days=2))
    assert seen[0].headers["fileshare-expires-in"] == "172800"
    assert file.expires_at == "2026-11-29 00:17:19"
    client.files.upload(b"hello")
    assert "fileshare-expires-in" not in seen[1].headers


# -- records and errors ------------------------------------------------------------------------


def test_link_record() -> None:
    link = fileshare.Link.from_json({**LINK, "success": True, "views": 4})
    assert link.created == datetime(2026, 11, 27, 10, tzinfo=timezone.utc)
    assert link.expiry == datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert link.downloads_left == 2 and link.extra == {"views": 4} and link.to_dict()["views"] == 4
    open_link = fileshare.Link.from_json({**LINK, "expires_at": None, "max_downloads": None})
    assert open_link.expiry is None and open_link.downloads_left is None
    with pytest.raises(fileshare.FileshareError, match="lacks status"):
        fileshare.Link.from_json({k: v for k, v in LINK.items() if k != "status"})
    # A file record from a server without file expiry still parses: expires_at is None.
    assert fileshare.FileRecord.from_json(FILE).expiry is None


def test_rotate_is_not_sent_again_after_a_dropped_connection(flavour: str) -> None:
    handler, seen = sequence(httpx.ReadError("dropped"), answer(link=LINK))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.APIConnectionError):
        client.links.rotate(12)
    assert len(seen) == 1  # the server may have rotated it: not a second time
    handler, seen = sequence(error(503, "service_unavailable"), answer(link=LINK))
    client, sleeps = make_either(flavour, handler)
    assert client.links.rotate(12).link_id == 12 and len(seen) == 2 and len(sleeps) == 1
    handler, seen = sequence(error(500, "internal_error"), answer(link=LINK))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.ServerError):
        client.links.rotate(12)
    assert len(seen) == 1


def test_create_is_sent_again_with_its_idempotency_key(flavour: str) -> None:
    handler, seen = sequence(httpx.ReadError("dropped"), error(500, "internal_error"), answer(201, link=LINK))
    client, sleeps = make_either(flavour, handler)
    assert client.links.create(7, label="x").link_id == 12 and len(seen) == 3 and len(sleeps) == 2
    keys = {r.headers["idempotency-key"] for r in seen}
    assert len(keys) == 1  # one key for the call: the server makes one link whatever the attempts
    assert all(json.loads(r.content) == {"label": "x"} for r in seen)


def test_update_and_delete_are_retried_after_a_dropped_connection(flavour: str) -> None:
    handler, seen = sequence(httpx.ReadError("dropped"), answer(link=LINK))
    client, _ = make_either(flavour, handler)
    assert client.links.update(12, label="x").link_id == 12 and len(seen) == 2


# -- download: POST, then the grant ----------------------------------------------------------------

DATA = bytes(range(256)) * 400  # 102400 bytes
SHA = hashlib.sha256(DATA).hexdigest()
URL = "https://files.example.com/download/tok2"
GRANT = URL + "/g1"


class _Cut(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body that stops with a dropped connection after ``keep`` bytes."""

    def __init__(self, data: bytes, keep: int) -> None:
        self.data, self.keep = data, keep

    def __iter__(self) -> Iterator[bytes]:
        yield self.data[: self.keep]
        raise httpx.ReadError("connection dropped")

    async def __aiter__(self) -> Any:
        yield self.data[: self.keep]
        raise httpx.ReadError("connection dropped")


class FakeLinkServer:
    """A link with a policy: ``POST`` checks the password, counts and answers 303 to the grant; the
    grant streams with Range and If-Range. ``cut_at`` drops the next grant GET after that many bytes;
    ``post_answers`` are answered (or raised) instead of the next POSTs."""

    def __init__(self, *, password: str | None = None, location: str | None = GRANT) -> None:
        self.password = password
        self.location = location
        self.requests: list[httpx.Request] = []
        self.posts = 0
        self.cut_at: int | None = None
        self.post_answers: list[httpx.Response | Exception] = []
        self.grant_dead = False

    def calls(self) -> list[tuple[str, str]]:
        return [(r.method, str(r.url)) for r in self.requests]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        self.requests.append(request)
        assert "authorization" not in request.headers  # a link never gets the API key
        if request.method == "POST" and str(request.url) == URL:
            if self.post_answers:
                canned = self.post_answers.pop(0)
                if isinstance(canned, Exception):
                    raise canned
                return canned
            given = json.loads(body)["password"] if body else None
            if self.password is not None and given != self.password:
                return error(401, "invalid_password")
            self.posts += 1
            grant = {"success": True, "download_url": GRANT, "expires_at": "2026-11-27 11:00:00"}
            location = {"location": self.location} if self.location else {}
            return httpx.Response(303, json=grant, headers=location)
        if str(request.url) == GRANT and request.method in ("GET", "HEAD"):
            if self.grant_dead:
                return error(404, "not_found")
            headers = {"etag": f'"{SHA}"', "accept-ranges": "bytes"}
            start = 0
            match = re.fullmatch(r"bytes=(\d+)-", request.headers.get("range", ""))
            if match and request.headers.get("if-range") in (None, f'"{SHA}"'):
                start = int(match.group(1))
                headers["content-range"] = f"bytes {start}-{len(DATA) - 1}/{len(DATA)}"
            headers["content-length"] = str(len(DATA) - start)
            status = 206 if start else 200
            if request.method == "HEAD":
                return httpx.Response(status, headers=headers)
            if self.cut_at is not None:
                keep, self.cut_at = self.cut_at, None
                return httpx.Response(status, headers=headers, stream=_Cut(DATA[start:], keep))
            return httpx.Response(status, headers=headers, content=DATA[start:])
        raise AssertionError(f"unexpected {request.method} {request.url}")


def inner(client: Any) -> Any:
    return client.client if isinstance(client, BlockingAsync) else client


def test_download_posts_once_then_resumes_through_the_grant(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer(password="s3cret-pass")
    server.cut_at = 40_000
    client, sleeps = make_either(flavour, server)
    result = client.download(URL, tmp_path / "a.bin", password="s3cret-pass")
    assert result == fileshare.DownloadResult(size=len(DATA), sha256=SHA, resumed_from=0)
    assert (tmp_path / "a.bin").read_bytes() == DATA
    assert server.calls() == [("POST", URL), ("GET", GRANT), ("GET", GRANT)] and server.posts == 1
    post, first, resumed = server.requests
    assert json.loads(post.content) == {"password": "s3cret-pass"} and post.headers["content-type"] == "application/json"
    assert "range" not in first.headers
    assert resumed.headers["range"] == "bytes=40000-" and resumed.headers["if-range"] == f'"{SHA}"'
    assert len(sleeps) == 1


def test_download_of_a_file_record_or_link_record_posts_an_empty_body(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    client, _ = make_either(flavour, server)
    record = fileshare.FileRecord.from_json({**FILE, "public_link": URL, "size": len(DATA), "sha256": SHA})
    assert client.download(record, tmp_path / "a.bin").size == len(DATA)
    assert client.download(fileshare.Link.from_json({**LINK, "url": URL}), tmp_path / "b.bin").sha256 == SHA
    assert server.calls() == [("POST", URL), ("GET", GRANT)] * 2
    assert server.requests[0].content == b"" and "content-type" not in server.requests[0].headers


def test_a_partial_file_of_a_link_alone_heads_the_grant(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    client, _ = make_either(flavour, server)
    (tmp_path / "a.bin").write_bytes(DATA[:30_000])
    assert client.download(URL, tmp_path / "a.bin").resumed_from == 30_000
    assert server.calls() == [("POST", URL), ("HEAD", GRANT), ("GET", GRANT)]
    assert server.requests[2].headers["range"] == "bytes=30000-"


def test_a_complete_file_of_a_record_counts_nothing(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    client, _ = make_either(flavour, server)
    (tmp_path / "a.bin").write_bytes(DATA)
    record = {"public_link": URL, "size": len(DATA), "sha256": SHA}
    assert client.download(record, tmp_path / "a.bin").resumed_from == len(DATA)
    assert server.calls() == []  # nothing to fetch: no POST, so no download counted


def test_a_failed_download_resumes_through_its_grant_in_a_later_call(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    server.cut_at = 50_000
    client, _ = make_either(flavour, server, max_retries=0)
    now = [1000.0]
    inner(client)._grants = Grants(clock=lambda: now[0])
    with pytest.raises(fileshare.APIConnectionError):
        client.download(URL, tmp_path / "a.bin")
    assert (tmp_path / "a.bin").stat().st_size == 50_000
    # Again with the same client: the grant of the first call, no second POST (nothing counted).
    assert client.download(URL, tmp_path / "a.bin").resumed_from == 50_000
    assert server.calls() == [("POST", URL), ("GET", GRANT), ("HEAD", GRANT), ("GET", GRANT)]
    # A finished download forgets its grant: the next download is a new one, and counts.
    client.download(URL, tmp_path / "b.bin")
    assert server.posts == 2

    server.cut_at = 10
    with pytest.raises(fileshare.APIConnectionError):
        client.download(URL, tmp_path / "c.bin")
    now[0] += GRANT_REUSE  # too old to trust: a new grant
    client.download(URL, tmp_path / "c.bin")
    assert server.posts == 4


def test_a_grant_that_answers_404_is_forgotten(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    server.cut_at = 10
    client, _ = make_either(flavour, server, max_retries=0)
    with pytest.raises(fileshare.APIConnectionError):
        client.download(URL, tmp_path / "a.bin")
    server.grant_dead = True  # the link was revoked meanwhile
    with pytest.raises(fileshare.NotFoundError):
        client.download(URL, tmp_path / "a.bin")
    server.grant_dead = False
    client.download(URL, tmp_path / "a.bin")
    assert server.posts == 2


def test_a_wrong_password_is_invalid_password_and_not_retried(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer(password="s3cret-pass")
    client, sleeps = make_either(flavour, server)
    for password in ("wrong-password", None):
        with pytest.raises(fileshare.AuthenticationError) as caught:
            client.download(URL, tmp_path / "a.bin", password=password)
        assert (caught.value.status, caught.value.code) == (401, "invalid_password")
    assert server.calls() == [("POST", URL)] * 2 and sleeps == [] and server.posts == 0
    assert "s3cret-pass" not in str(caught.value)


def test_the_post_is_retried_only_after_an_answer_that_counted_nothing(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    server.post_answers = [error(429, "rate_limited", {"retry-after": "2"}), error(503, "service_unavailable")]
    client, sleeps = make_either(flavour, server)
    client.download(URL, tmp_path / "a.bin")
    assert server.calls() == [("POST", URL)] * 3 + [("GET", GRANT)] and sleeps[0] == 2.0

    for failure in (httpx.ReadError("dropped"), httpx.ReadTimeout("slow"), httpx.ConnectError("refused")):
        server = FakeLinkServer()
        server.post_answers = [failure]
        client, _ = make_either(flavour, server)
        with pytest.raises(fileshare.APIConnectionError):
            client.download(URL, tmp_path / "b.bin")
        assert server.calls() == [("POST", URL)]  # it may have counted: never sent again

    # Too many wrong passwords: a Retry-After of 15 minutes is not slept through.
    server = FakeLinkServer()
    server.post_answers = [error(429, "rate_limited", {"retry-after": "900"})]
    client, sleeps = make_either(flavour, server)
    with pytest.raises(fileshare.RateLimitError) as caught:
        client.download(URL, tmp_path / "c.bin")
    assert caught.value.retry_after == 900 and sleeps == [] and len(server.requests) == 1


def test_the_grant_comes_from_the_json_body_and_redirects_are_not_followed(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer(location=None)
    client, _ = make_either(flavour, server)
    client.download(URL, tmp_path / "a.bin")
    assert server.calls() == [("POST", URL), ("GET", GRANT)]

    # An http_client that follows redirects: the SDK still reads the 303 itself.
    server = FakeLinkServer()
    if flavour == "sync":
        http: Any = httpx.Client(transport=httpx.MockTransport(server), follow_redirects=True)
        client = fileshare.Client(BASE, KEY, http_client=http)
    else:
        http = httpx.AsyncClient(transport=httpx.MockTransport(server), follow_redirects=True)
        client = BlockingAsync(fileshare.AsyncClient(BASE, KEY, http_client=http))
    assert client.download(URL, tmp_path / "b.bin").sha256 == SHA
    assert server.calls() == [("POST", URL), ("GET", GRANT)]
    assert server.requests[1].headers["accept-encoding"] == "identity"  # the SDK's GET, not a redirect's


def test_a_dead_link_is_not_found(flavour: str, tmp_path: Path) -> None:
    server = FakeLinkServer()
    server.post_answers = [error(404, "not_found")]
    client, sleeps = make_either(flavour, server)
    with pytest.raises(fileshare.NotFoundError):
        client.download(URL, tmp_path / "a.bin")
    assert len(server.requests) == 1 and sleeps == []
