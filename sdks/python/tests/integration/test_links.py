"""Links and file expiry (issue 28) against the real server, with the sync Client and the
AsyncClient (``flavour``): every links call, field errors, another account's link, the default
link, rotation, limited and password-protected downloads through the grant, expiring files."""

from __future__ import annotations

import hashlib
import io
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

import fileshare
from helpers import CuttingProxy, random_bytes, through_proxy, without_waits

PASSWORD = "correct horse battery"


def near(moment: datetime | None, expected: datetime, seconds: float = 120) -> bool:
    return moment is not None and abs((moment - expected).total_seconds()) <= seconds


def now() -> datetime:
    return datetime.now(timezone.utc)


def counts(client: Any, link: fileshare.Link) -> tuple[int, str]:
    current = client.links.get(link.link_id)
    return current.download_count, current.status


def test_every_links_call(make_client: Any, server: dict[str, Any], tmp_path: Path) -> None:
    client = make_client("pro")
    data = b"links " * 1000
    file = client.files.upload(data, filename="links.txt")
    [default] = client.links.list(file.file_id)
    assert (default.default, default.url, default.file_id, default.status) == (True, file.public_link, file.file_id, "active")
    assert (default.label, default.expires_at, default.max_downloads, default.password_protected) == (None, None, None, False)

    limited = client.links.create(
        file.file_id, label="for the auditors", expires_in=timedelta(days=7), max_downloads=3, password=PASSWORD
    )
    assert (limited.label, limited.max_downloads, limited.download_count, limited.password_protected) == ("for the auditors", 3, 0, True)
    assert (limited.default, limited.status, limited.downloads_left) == (False, "active", 3)
    assert near(limited.expiry, now() + timedelta(days=7)) and near(limited.created, now())
    assert limited.url.startswith(server["server_url"] + "/download/") and limited.url != file.public_link
    at = (now() + timedelta(days=30)).replace(microsecond=0)
    dated = client.links.create(file.file_id, expires_at=at)
    assert dated.expiry == at and dated.max_downloads is None
    plain = client.links.create(file.file_id)
    assert (plain.label, plain.expires_at, plain.max_downloads, plain.password_protected) == (None, None, None, False)
    # The default link first, then the newest first.
    assert [link.link_id for link in client.links.list(file.file_id)] == [default.link_id, plain.link_id, dated.link_id, limited.link_id]
    assert client.links.get(limited.link_id) == limited

    # An argument left out stays; None clears.
    renamed = client.links.update(limited.link_id, label="renamed")
    assert (renamed.label, renamed.expires_at, renamed.max_downloads, renamed.password_protected) == (
        "renamed", limited.expires_at, 3, True
    )
    cleared = client.links.update(limited.link_id, label=None, expires_at=None, max_downloads=None, password=None)
    assert (cleared.label, cleared.expires_at, cleared.max_downloads, cleared.password_protected) == (None, None, None, False)
    again = client.links.update(limited.link_id, expires_in=3600, max_downloads=10, password="another secret")
    assert near(again.expiry, now() + timedelta(hours=1)) and again.max_downloads == 10 and again.password_protected

    # Delete revokes: listed as revoked, its URL is dead at once.
    assert client.download(plain.url, tmp_path / "plain.bin").size == len(data)
    client.links.delete(plain.link_id)
    statuses = {link.link_id: link.status for link in client.links.list(file.file_id)}
    assert statuses[plain.link_id] == "revoked" and statuses[dated.link_id] == "active"
    with pytest.raises(fileshare.NotFoundError):
        client.download(plain.url, tmp_path / "revoked.bin")
    assert not (tmp_path / "revoked.bin").exists()
    with pytest.raises(fileshare.BadRequestError) as conflict:
        client.links.delete(default.link_id)
    assert (conflict.value.status, conflict.value.code) == (409, "default_link_required")

    # Rotate: a new URL, the old one dead at once, counts kept.
    client.download(dated, tmp_path / "dated.bin")
    rotated = client.links.rotate(dated.link_id)
    assert rotated.url != dated.url and (rotated.link_id, rotated.download_count, rotated.expires_at) == (dated.link_id, 1, dated.expires_at)
    with pytest.raises(fileshare.NotFoundError):
        client.download(dated.url, tmp_path / "old.bin")
    assert client.download(rotated, tmp_path / "new.bin").sha256 == hashlib.sha256(data).hexdigest()
    assert counts(client, rotated) == (2, "active")
    # Rotating the default link changes the file's public_link.
    new_default = client.links.rotate(default.link_id)
    assert client.files.get(file.file_id).public_link == new_default.url != file.public_link
    with pytest.raises(fileshare.NotFoundError):
        client.download(file.public_link, tmp_path / "old-default.bin")
    assert client.files.get(file.file_id).download_count == 3  # the sum over its links


def test_field_errors_are_invalid_parameter(make_client: Any) -> None:
    client = make_client("pro")
    file = client.files.upload(b"fields", filename="fields.txt")
    future = now() + timedelta(days=1)
    cases: list[tuple[str, dict[str, Any]]] = [
        ("expires_in", {"expires_in": 0}),
        ("expires_in", {"expires_in": 315360001}),
        ("expires_at", {"expires_at": "2001-01-01 00:00:00"}),
        ("expires_at", {"expires_at": "next tuesday"}),
        ("expires_", {"expires_in": 60, "expires_at": future}),  # both at once
        ("max_downloads", {"max_downloads": 0}),
        ("max_downloads", {"max_downloads": 1000001}),
        ("password", {"password": "short"}),
        ("password", {"password": "x" * 1025}),
        ("label", {"label": "two\nlines"}),
        ("label", {"label": "x" * 101}),
    ]
    link = client.links.create(file.file_id)
    calls: list[tuple[str, Callable[..., Any]]] = [
        ("create", lambda **options: client.links.create(file.file_id, **options)),
        ("update", lambda **options: client.links.update(link.link_id, **options)),
    ]
    for name, call in calls:
        for field, options in cases:
            with pytest.raises(fileshare.BadRequestError) as caught:
                call(**options)
            assert (caught.value.status, caught.value.code) == (400, "invalid_parameter"), (name, options)
            assert field in caught.value.message, (name, options, caught.value.message)
    for field, options in cases[:5]:  # the expiry rules hold for files too
        with pytest.raises(fileshare.BadRequestError) as caught:
            client.files.update(file.file_id, **options)
        assert caught.value.code == "invalid_parameter" and field in caught.value.message
    # max_downloads cannot go below the downloads already made.
    client.download(link.url, io.BytesIO())
    client.download(link.url, io.BytesIO())
    with pytest.raises(fileshare.BadRequestError) as below:
        client.links.update(link.link_id, max_downloads=1)
    assert below.value.code == "invalid_parameter" and "max_downloads" in below.value.message
    assert client.links.update(link.link_id, max_downloads=2).status == "exhausted"


def test_another_accounts_file_and_links_are_not_found(make_client: Any, other_key: str) -> None:
    owner = make_client("pro")
    other = make_client(None, api_key=other_key)
    file = owner.files.upload(b"mine", filename="mine.txt")
    link = owner.links.create(file.file_id, label="mine")
    calls: list[Callable[[], Any]] = [
        lambda: other.links.get(link.link_id),
        lambda: other.links.update(link.link_id, label="theirs"),
        lambda: other.links.rotate(link.link_id),
        lambda: other.links.delete(link.link_id),
        lambda: other.links.list(file.file_id),
        lambda: other.links.create(file.file_id),
        lambda: other.files.update(file.file_id, filename="theirs.txt"),
    ]
    for call in calls:
        with pytest.raises(fileshare.NotFoundError) as caught:
            call()
        assert (caught.value.status, caught.value.code) == (404, "not_found")
    assert owner.links.get(link.link_id) == link
    assert [each.link_id for each in owner.links.list(file.file_id)][1:] == [link.link_id]
    assert owner.files.get(file.file_id).filename == "mine.txt"


def test_a_limited_link_counts_a_download_once_and_resumes_through_the_grant(
    make_client: Any, server: dict[str, Any], proxy: CuttingProxy, flavour: str, tmp_path: Path
) -> None:
    data = random_bytes(2_000_000, 51)
    owner = make_client("pro")
    file = owner.files.upload(data, filename="limited.bin")
    link = owner.links.create(file.file_id, max_downloads=2)
    expected = fileshare.DownloadResult(size=len(data), sha256=hashlib.sha256(data).hexdigest(), resumed_from=0)

    # A connection that drops mid-way: resumed within the call through the same grant.
    client = without_waits(make_client("pro", transport=through_proxy(flavour, server, proxy)))
    cuts = proxy.cuts
    proxy.cut_downstream_after(700_000)
    assert client.download(link.url, tmp_path / "one.bin") == expected
    assert proxy.cuts == cuts + 1 and (tmp_path / "one.bin").read_bytes() == data
    assert counts(owner, link) == (1, "active")

    # A download that fails for good: the same client resumes it later through its grant, which
    # counts nothing and still works once the link is exhausted.
    once = without_waits(make_client("pro", transport=through_proxy(flavour, server, proxy), max_retries=0))
    proxy.cut_downstream_after(900_000)
    with pytest.raises(fileshare.APIConnectionError):
        once.download(link.url, tmp_path / "two.bin")
    kept = (tmp_path / "two.bin").stat().st_size
    assert 0 < kept < len(data)
    assert counts(owner, link) == (2, "exhausted")
    result = once.download(link.url, tmp_path / "two.bin")
    assert result.resumed_from == kept and (tmp_path / "two.bin").read_bytes() == data
    assert counts(owner, link) == (2, "exhausted") and owner.files.get(file.file_id).download_count == 2

    # Exhausted: a new download is refused like an unknown link.
    with pytest.raises(fileshare.NotFoundError):
        make_client("pro").download(link.url, tmp_path / "three.bin")
    assert counts(owner, link) == (2, "exhausted")


def test_a_password_protected_download(make_client: Any, tmp_path: Path) -> None:
    client = make_client("pro")
    data = random_bytes(300_000, 61)
    file = client.files.upload(data, filename="secret.bin")
    link = client.links.create(file.file_id, password=PASSWORD)
    for wrong in ("wrong password", None):
        with pytest.raises(fileshare.AuthenticationError) as caught:
            client.download(link.url, tmp_path / "wrong.bin", password=wrong)
        assert (caught.value.status, caught.value.code) == (401, "invalid_password")
        assert PASSWORD not in str(caught.value)
    assert not (tmp_path / "wrong.bin").exists()
    assert counts(client, link) == (0, "active")  # wrong passwords count nothing
    assert client.download(link, tmp_path / "right.bin", password=PASSWORD).size == len(data)
    assert (tmp_path / "right.bin").read_bytes() == data
    assert counts(client, link) == (1, "active")


def test_wrong_passwords_are_rate_limited(server: dict[str, Any], tmp_path: Path) -> None:
    """Ten wrong passwords from one address on one link: further attempts are refused for a while,
    and the SDK does not wait that out (a Retry-After over 60 s raises at once). One client only:
    each attempt costs the server a slow password hash."""
    with fileshare.Client(server["base_url"], server["keys"]["pro"]) as client:
        file = client.files.upload(b"locked", filename="locked.txt")
        locked = client.links.create(file.file_id, password=PASSWORD)
        for _ in range(10):
            with pytest.raises(fileshare.AuthenticationError):
                client.download(locked.url, tmp_path / "locked.bin", password="wrong password")
        started = time.monotonic()
        with pytest.raises(fileshare.RateLimitError) as refused:
            client.download(locked.url, tmp_path / "locked.bin", password=PASSWORD)
        assert refused.value.code == "rate_limited" and refused.value.retry_after is not None
        assert refused.value.retry_after > 60 and time.monotonic() - started < 10
        assert counts(client, locked) == (0, "active")


def test_file_expiry_by_update_and_by_upload(make_client: Any, tmp_path: Path) -> None:
    client = make_client("pro")
    file = client.files.upload(b"expiring", filename="expiring.txt")
    assert file.expires_at is None and file.expiry is None
    updated = client.files.update(file.file_id, expires_in=3600)
    assert near(updated.expiry, now() + timedelta(hours=1))
    assert client.files.get(file.file_id).expires_at == updated.expires_at
    at = (now() + timedelta(days=2)).replace(microsecond=0)
    assert client.files.update(file.file_id, expires_at=at).expiry == at
    renamed = client.files.update(file.file_id, filename="renamed.txt")
    assert (renamed.filename, renamed.expiry) == ("renamed.txt", at)
    assert client.files.update(file.file_id, expires_at=None).expires_at is None
    assert client.files.get(file.file_id).expires_at is None

    multipart = client.files.upload(b"two hours", filename="multipart.txt", expires_in=timedelta(hours=2))
    assert near(multipart.expiry, now() + timedelta(hours=2))
    tus = client.files.upload(b"x" * 5000, filename="tus.bin", resumable=True, chunk_size=2048, expires_in=7200)
    assert near(tus.expiry, now() + timedelta(hours=2)) and client.files.get(tus.file_id).expires_at == tus.expires_at

    # Expiry is exact: past it, the file, its links and the link's grant flow are gone at once.
    short = client.files.upload(b"gone soon", filename="short.txt", expires_in=1)
    short_link = client.links.create(file.file_id, expires_in=1)
    time.sleep(2.2)
    with pytest.raises(fileshare.NotFoundError):
        client.files.get(short.file_id)
    with pytest.raises(fileshare.NotFoundError):
        client.download(short, tmp_path / "short.txt")
    with pytest.raises(fileshare.NotFoundError):
        client.links.list(short.file_id)
    assert counts(client, short_link) == (0, "expired")
    with pytest.raises(fileshare.NotFoundError):
        client.download(short_link.url, tmp_path / "short-link.txt")
    assert short.file_id not in {f.file_id for f in client.files.iterate()}


def test_the_link_limit(server: dict[str, Any]) -> None:
    with fileshare.Client(server["base_url"], server["keys"]["pro"]) as client:
        file = client.files.upload(b"many links", filename="many.txt")
        made = [client.links.create(file.file_id, label=f"#{i}") for i in range(99)]  # 100 with the default link
        with pytest.raises(fileshare.LimitExceededError) as caught:
            client.links.create(file.file_id)
        assert (caught.value.status, caught.value.code) == (403, "link_limit_exceeded")
        client.links.delete(made[0].link_id)  # a revoked link does not count
        assert client.links.create(file.file_id).status == "active"
