"""Issue 32 against the real server, with the sync Client and the AsyncClient (``flavour``): key()
of a full and a scoped key, 403 insufficient_scope and ip_not_allowed (never retried, nothing
done), and the audit log of an upload, an update and a deletion, listed and iterated."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import pytest

import fileshare
from helpers import recording

from conftest import Factory

SCOPES = [
    "files:read",
    "files:write",
    "files:delete",
    "links:read",
    "links:write",
    "stats:read",
    "webhooks:manage",
    "requests:manage",
    "audit:read",
]


def test_key_of_the_full_pro_key_holds_all_nine_scopes(make_client: Factory, server: dict[str, Any]) -> None:
    key = make_client("pro").key()
    assert isinstance(key, fileshare.CurrentKey)
    assert key.scopes == SCOPES
    assert key.allowed_ips == [] and key.plan == "pro"
    assert isinstance(key.key_id, int) and key.key_id > 0
    assert server["keys"]["pro"].startswith(key.prefix) and len(key.prefix) < len(server["keys"]["pro"])
    assert key.created.tzinfo == timezone.utc and key.created <= datetime.now(timezone.utc) + timedelta(minutes=1)
    assert key.expiry is None
    assert server["keys"]["pro"] not in repr(key) and server["keys"]["pro"] not in key.to_json()


def test_key_of_the_read_only_key_names_exactly_its_scopes(make_client: Factory) -> None:
    client = make_client("read_only")
    key = client.key()
    assert key.scopes == ["files:read", "links:read", "stats:read"]
    assert key.plan == "pro" and key.allowed_ips == []
    assert key.key_id != make_client("pro").key().key_id
    client.stats()  # stats:read
    client.files.list(limit=1)  # files:read


def test_a_delete_with_the_read_only_key_is_refused_and_deletes_nothing(make_client: Factory, flavour: str) -> None:
    pro = make_client("pro")
    file = pro.files.upload(b"keep me", filename="keep.txt")
    transport = recording(flavour)
    read_only = make_client("read_only", transport=transport)
    assert read_only.files.get(file.file_id) == file  # reading is allowed
    with pytest.raises(fileshare.InsufficientScopeError) as caught:
        read_only.files.delete(file.file_id)
    error = caught.value
    assert isinstance(error, fileshare.PermissionDeniedError)
    assert (error.status, error.code, error.required_scope) == (403, "insufficient_scope", "files:delete")
    assert error.headers is not None and 'scope="files:delete"' in error.headers.get("www-authenticate", "")
    assert "files:delete" in error.message and error.request_id
    assert [(e.method, e.status) for e in transport.exchanges] == [("GET", 200), ("DELETE", 403)]  # not retried
    assert pro.files.get(file.file_id) == file  # still there
    pro.files.delete(file.file_id)


def test_the_read_only_key_can_neither_upload_nor_make_links(make_client: Factory) -> None:
    pro = make_client("pro")
    file = pro.files.upload(b"linked", filename="linked.txt")
    read_only = make_client("read_only")
    with pytest.raises(fileshare.InsufficientScopeError) as upload:
        read_only.files.upload(b"nope", filename="nope.txt")
    assert upload.value.required_scope == "files:write"
    with pytest.raises(fileshare.InsufficientScopeError) as link:
        read_only.links.create(file.file_id)
    assert link.value.required_scope == "links:write"
    assert [each.default for each in read_only.links.list(file.file_id)] == [True]  # links:read
    with pytest.raises(fileshare.InsufficientScopeError) as audit:
        read_only.audit_events.list()
    assert audit.value.required_scope == "audit:read"
    pro.files.delete(file.file_id)


def test_every_call_with_the_ip_restricted_key_is_refused(make_client: Factory, flavour: str) -> None:
    transport = recording(flavour)
    client = make_client("ip_restricted", transport=transport)
    calls: list[Callable[[], Any]] = [
        lambda: client.key(),
        lambda: client.stats(),
        lambda: client.files.list(limit=1),
        lambda: client.files.upload(b"from here", filename="here.txt"),
        lambda: client.audit_events.list(),
    ]
    for call in calls:
        with pytest.raises(fileshare.IpNotAllowedError) as caught:
            call()
        assert isinstance(caught.value, fileshare.PermissionDeniedError)
        assert (caught.value.status, caught.value.code, caught.value.required_scope) == (403, "ip_not_allowed", None)
    assert [e.status for e in transport.exchanges] == [403] * len(calls)  # none retried
    assert make_client("pro").files.list(limit=1).pagination.total >= 0


def test_the_audit_log_of_an_upload_an_update_and_a_delete(make_client: Factory, server: dict[str, Any], flavour: str) -> None:
    client = make_client("pro")
    me = client.key()
    file = client.files.upload(b"audited", filename=f"audited-{flavour}.txt")
    client.files.update(file.file_id, filename=f"renamed-{flavour}.txt")
    client.files.delete(file.file_id)

    page = client.audit_events.list(limit=10)
    assert isinstance(page, fileshare.AuditEventList) and page.pagination.limit == 10
    ours = [e for e in page.events if e.target is not None and e.target.type == "file" and e.target.id == file.file_id]
    assert [e.action for e in ours] == ["file.deleted", "file.updated", "file.uploaded"]
    assert page.events[: len(ours)] == ours  # the newest events of the account
    ids = [e.event_id for e in page.events]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    for item in ours:
        assert item.actor.type == "key" and item.actor.id == me.key_id
        assert item.occurred_at.tzinfo == timezone.utc
        assert abs(item.occurred_at - datetime.now(timezone.utc)) < timedelta(minutes=5)
        assert item.user_agent is not None and item.user_agent.startswith("fileshare-sdk-python/")
    uploaded = ours[-1]
    assert uploaded.details.get("filename") == f"audited-{flavour}.txt"
    assert all(server["keys"]["pro"] not in each.to_json() for each in page.events)  # never the key

    deleted = client.audit_events.list(limit=1, action="file.deleted")
    assert [e.event_id for e in deleted.events] == [ours[0].event_id]
    family = client.audit_events.list(limit=3, action="file.*", since=datetime.now(timezone.utc) - timedelta(hours=1))
    assert [e.event_id for e in family.events] == [e.event_id for e in ours]


def test_iterate_pages_through_the_log_with_a_small_limit(make_client: Factory, flavour: str) -> None:
    client = make_client("pro")
    for index in range(3):
        made = client.files.upload(bytes([index]), filename=f"page-{index}.bin")
        client.files.delete(made.file_id)
    everything = [e.event_id for e in client.audit_events.iterate(limit=100, action="file.*")]
    transport = recording(flavour)
    paged = make_client("pro", transport=transport)
    seen = [e.event_id for e in paged.audit_events.iterate(limit=2, action="file.*")]
    assert seen == everything and len(seen) >= 6
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == len(seen)
    assert len(transport.exchanges) == (len(seen) + 1) // 2  # next_before_id is null on the last page
    assert all(e.method == "GET" and e.path.endswith("/audit-events") and e.status == 200 for e in transport.exchanges)

    first = paged.audit_events.list(limit=2, action="file.*")
    second = paged.audit_events.list(limit=2, action="file.*", before_id=first.pagination.next_before_id)
    assert [e.event_id for e in first.events + second.events] == seen[:4]


def test_the_auditor_key_lists_events_but_cannot_upload(make_client: Factory, flavour: str) -> None:
    pro = make_client("pro")
    file = pro.files.upload(b"seen by the auditor", filename="seen.txt")
    auditor = make_client("auditor")
    key = auditor.key()
    assert key.scopes == ["audit:read"] and key.plan == "pro"
    newest = auditor.audit_events.list(limit=5)
    assert any(e.action == "file.uploaded" and e.target is not None and e.target.id == file.file_id for e in newest.events)
    assert next(iter(auditor.audit_events.iterate(limit=1))).event_id == newest.events[0].event_id

    total = pro.stats().stats.total_files
    with pytest.raises(fileshare.InsufficientScopeError) as caught:
        auditor.files.upload(b"not allowed", filename="nope.txt")
    assert (caught.value.status, caught.value.required_scope) == (403, "files:write")
    assert pro.stats().stats.total_files == total  # nothing stored
    with pytest.raises(fileshare.InsufficientScopeError) as listing:
        auditor.files.list()
    assert listing.value.required_scope == "files:read"
    pro.files.delete(file.file_id)


def test_a_bad_filter_is_a_bad_request(make_client: Factory) -> None:
    client = make_client("pro")
    with pytest.raises(fileshare.BadRequestError) as caught:
        client.audit_events.list(limit=0)
    assert (caught.value.status, caught.value.code) == (400, "invalid_parameter")
    with pytest.raises(fileshare.BadRequestError):
        client.audit_events.list(since="yesterday")
