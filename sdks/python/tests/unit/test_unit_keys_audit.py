"""Unit tests of issue 32 with httpx.MockTransport: 403 insufficient_scope / ip_not_allowed mapped to
their PermissionDeniedError subclasses (required_scope from the body, else WWW-Authenticate), never
retried; client.key() and its CurrentKey; audit_events.list and iterate (by next_before_id), their
query parameters, and the AuditEvent record."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

import fileshare
from fileshare._errors import error_from_response, www_authenticate_param
from mock_api import FILE, error, make, make_either, sequence

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


def scope_error(scope: str | None, *, in_body: bool = True, in_header: bool = True) -> httpx.Response:
    body_error: dict[str, Any] = {"code": "insufficient_scope", "message": f"This API key lacks the scope {scope}."}
    if in_body and scope is not None:
        body_error["required_scope"] = scope
    headers = {"x-request-id": "req-s"}
    if in_header:
        challenge = 'Bearer error="insufficient_scope"'
        headers["www-authenticate"] = challenge + (f', scope="{scope}"' if scope is not None else "")
    return httpx.Response(403, json={"success": False, "error": body_error}, headers=headers)


# -- 403 insufficient_scope and ip_not_allowed -------------------------------------------------


@pytest.mark.parametrize(
    ("in_body", "in_header", "expected"),
    [(True, True, "files:delete"), (True, False, "files:delete"), (False, True, "files:delete"), (False, False, None)],
)
def test_insufficient_scope_names_the_scope_from_the_body_else_the_header(flavour: str, in_body: bool, in_header: bool, expected: str | None) -> None:
    handler, seen = sequence(scope_error("files:delete", in_body=in_body, in_header=in_header), httpx.Response(204))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.InsufficientScopeError) as caught:
        client.files.delete(7)
    error = caught.value
    assert isinstance(error, fileshare.PermissionDeniedError) and isinstance(error, fileshare.FileshareError)
    assert (error.status, error.code, error.required_scope, error.request_id) == (403, "insufficient_scope", expected, "req-s")
    assert "files:delete" in str(error) and str(error).endswith("(request id req-s)")
    assert len(seen) == 1 and sleeps == []  # not retried


def test_the_body_wins_over_the_header() -> None:
    headers = httpx.Headers({"www-authenticate": 'Bearer error="insufficient_scope", scope="stats:read"'})
    body = b'{"success":false,"error":{"code":"insufficient_scope","message":"m","required_scope":"audit:read"}}'
    error = error_from_response(403, headers, body)
    assert isinstance(error, fileshare.InsufficientScopeError) and error.required_scope == "audit:read"


def test_a_scope_challenge_without_a_json_body_is_still_insufficient_scope() -> None:
    headers = httpx.Headers({"www-authenticate": 'Bearer realm="api", error="insufficient_scope", scope="files:write"'})
    error = error_from_response(403, headers, b"Forbidden")
    assert type(error) is fileshare.InsufficientScopeError
    assert (error.code, error.required_scope, error.body) == (None, "files:write", "Forbidden")


def test_ip_not_allowed_is_its_own_permission_error_and_not_retried(flavour: str) -> None:
    handler, seen = sequence(error(403, "ip_not_allowed"), httpx.Response(200, json={"success": True, "file": FILE}))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.IpNotAllowedError) as caught:
        client.files.get(7)
    assert isinstance(caught.value, fileshare.PermissionDeniedError)
    assert (caught.value.status, caught.value.code, caught.value.required_scope) == (403, "ip_not_allowed", None)
    assert len(seen) == 1 and sleeps == []


def test_plan_not_supported_stays_a_plain_permission_error() -> None:
    handler, seen = sequence(error(403, "plan_not_supported"))
    client, _ = make(handler)
    with pytest.raises(fileshare.PermissionDeniedError) as caught:
        client.stats()
    assert type(caught.value) is fileshare.PermissionDeniedError and caught.value.required_scope is None
    assert len(seen) == 1


def test_a_scope_error_is_not_retried_even_with_retry_after() -> None:
    response = scope_error("files:write")
    response.headers["retry-after"] = "1"
    handler, seen = sequence(response, httpx.Response(201, json={"success": True, **FILE}))
    client, sleeps = make(handler, max_retries=5)
    with pytest.raises(fileshare.InsufficientScopeError) as caught:
        client.files.upload(b"hello")
    assert caught.value.required_scope == "files:write" and len(seen) == 1 and sleeps == []


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('Bearer error="insufficient_scope", scope="files:delete"', "files:delete"),
        ('Bearer scope="links:write",error="insufficient_scope"', "links:write"),
        ("Bearer error=insufficient_scope, scope=stats:read", "stats:read"),
        ('Bearer error_description="no scope=x here", scope="audit:read"', "audit:read"),
        ('Bearer realm="a, scope=evil"', None),
        ('Bearer error="insufficient_scope", xscope="nope"', None),
        ('Bearer scope="a \\"b\\""', 'a "b"'),
        ("", None),
    ],
)
def test_the_www_authenticate_scope_parameter(header: str, expected: str | None) -> None:
    assert www_authenticate_param(header, "scope") == expected


# -- client.key() ------------------------------------------------------------------------------

KEY_ANSWER: dict[str, Any] = {
    "success": True,
    "key": {
        "key_id": 12,
        "name": "ci",
        "prefix": "fsk_Ab12Cd",
        "scopes": ["files:read", "stats:read"],
        "allowed_ips": ["10.0.0.0/8"],
        "created_at": "2026-11-27 10:00:00",
        "expires_at": None,
        "last_used_at": "2026-11-27 10:05:00",
    },
    "plan": "pro",
}


def test_key_answers_the_current_key(flavour: str) -> None:
    handler, seen = sequence(httpx.Response(200, json=KEY_ANSWER))
    client, _ = make_either(flavour, handler)
    key = client.key()
    assert isinstance(key, fileshare.CurrentKey)
    assert (seen[0].method, seen[0].url.path) == ("GET", "/api/v1/key")
    assert (key.key_id, key.name, key.prefix, key.plan) == (12, "ci", "fsk_Ab12Cd", "pro")
    assert key.scopes == ["files:read", "stats:read"] and key.allowed_ips == ["10.0.0.0/8"]
    assert key.created == datetime(2026, 11, 27, 10, 0, tzinfo=timezone.utc) and key.expiry is None
    assert key.last_used == datetime(2026, 11, 27, 10, 5, tzinfo=timezone.utc)
    assert key.to_dict() == {**KEY_ANSWER["key"], "plan": "pro"}
    assert "fsk_Ab12Cd" in repr(key)


def test_a_full_key_with_unknown_fields_and_no_use_yet() -> None:
    raw = {
        "success": True,
        "key": {**KEY_ANSWER["key"], "scopes": SCOPES, "allowed_ips": [], "expires_at": "2027-01-01 00:00:00", "last_used_at": None, "label": "new"},
        "plan": "business",
        "account_id": 3,
    }
    key = fileshare.CurrentKey.from_json(raw)
    assert key.scopes == SCOPES and key.allowed_ips == [] and key.plan == "business"
    assert key.expiry == datetime(2027, 1, 1, tzinfo=timezone.utc) and key.last_used is None
    assert key.extra == {"label": "new", "account_id": 3}


def test_key_answers_that_are_not_a_key_are_errors() -> None:
    answers: list[dict[str, Any]] = [{"success": True}, {"success": True, "key": {"key_id": 1}, "plan": "pro"}]
    for raw in answers:
        with pytest.raises(fileshare.FileshareError, match="key"):
            fileshare.CurrentKey.from_json(raw)
    with pytest.raises(fileshare.FileshareError, match="scopes is not a list"):
        fileshare.CurrentKey.from_json({**KEY_ANSWER, "key": {**KEY_ANSWER["key"], "scopes": "files:read"}})


def test_key_is_retried_like_any_get_and_has_a_raw_response(flavour: str) -> None:
    handler, seen = sequence(error(503, "unavailable"), httpx.Response(200, json=KEY_ANSWER, headers={"ratelimit-remaining": "58"}))
    client, sleeps = make_either(flavour, handler)
    raw = client.with_raw_response.key()
    assert raw.status_code == 200 and raw.rate_limit.remaining == 58 and raw.parse().key_id == 12
    assert len(seen) == 2 and len(sleeps) == 1


# -- audit_events ------------------------------------------------------------------------------


def event(event_id: int, action: str = "file.uploaded", **changes: Any) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "at": "2026-11-27 10:05:00",
        "action": action,
        "actor": {"type": "key", "id": 12, "name": "ci"},
        "ip": "127.0.0.0",
        "user_agent": "fileshare-sdk-python/0.2.0",
        "target": {"type": "file", "id": 7},
        "details": {"filename": "a.txt", "size": 3},
        **changes,
    }


class FakeAudit:
    """``GET /audit-events`` over events 1..n (newest first), by ``before_id``, recording each query."""

    def __init__(self, ids: range) -> None:
        self.ids = sorted(ids, reverse=True)
        self.queries: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert (request.method, request.url.path) == ("GET", "/api/v1/audit-events")
        query = dict(parse_qsl(request.url.query.decode() if isinstance(request.url.query, bytes) else str(request.url.query)))
        self.queries.append(query)
        limit = int(query.get("limit", "20"))
        below = int(query["before_id"]) if "before_id" in query else None
        chosen = [i for i in self.ids if below is None or i < below][:limit]
        more = bool(chosen) and any(i < chosen[-1] for i in self.ids)
        pagination = {"limit": limit, "next_before_id": chosen[-1] if more else None}
        return httpx.Response(200, json={"success": True, "events": [event(i) for i in chosen], "pagination": pagination})


def test_list_sends_only_the_filters_given(flavour: str) -> None:
    server = FakeAudit(range(1, 8))
    client, _ = make_either(flavour, server)
    page = client.audit_events.list()
    assert server.queries[-1] == {} and [e.event_id for e in page.events] == [7, 6, 5, 4, 3, 2, 1]
    assert page.pagination == fileshare.AuditPagination(limit=20, next_before_id=None)
    page = client.audit_events.list(limit=3, before_id=6, action="file.*", since="2026-11-01")
    assert server.queries[-1] == {"limit": "3", "before_id": "6", "action": "file.*", "since": "2026-11-01"}
    assert [e.event_id for e in page.events] == [5, 4, 3] and page.pagination.next_before_id == 3


@pytest.mark.parametrize(
    ("since", "sent"),
    [
        (datetime(2026, 11, 27, 12, 30, 5, tzinfo=timezone(timedelta(hours=2))), "2026-11-27T10:30:05Z"),
        (datetime(2026, 11, 27, 10, 0, tzinfo=timezone.utc), "2026-11-27T10:00:00Z"),
        (date(2026, 11, 27), "2026-11-27"),
        ("2026-11-27T10:00:00Z", "2026-11-27T10:00:00Z"),
    ],
)
def test_since_is_sent_in_utc(since: Any, sent: str) -> None:
    server = FakeAudit(range(1, 3))
    client, _ = make(server)
    client.audit_events.list(since=since)
    assert server.queries[-1] == {"since": sent}


def test_a_naive_since_is_refused_before_anything_is_sent() -> None:
    server = FakeAudit(range(1, 3))
    client, _ = make(server)
    with pytest.raises(fileshare.ConfigurationError, match="aware datetime"):
        client.audit_events.list(since=datetime(2026, 11, 27))
    with pytest.raises(fileshare.ConfigurationError, match="since"):
        client.audit_events.list(since=1234)  # type: ignore[arg-type]
    assert server.queries == []


def test_iterate_pages_by_next_before_id(flavour: str) -> None:
    server = FakeAudit(range(1, 26))
    client, _ = make_either(flavour, server)
    seen = [e.event_id for e in client.audit_events.iterate(limit=10, action="file.deleted")]
    assert seen == list(range(25, 0, -1))
    assert server.queries == [
        {"limit": "10", "action": "file.deleted"},
        {"limit": "10", "action": "file.deleted", "before_id": "16"},
        {"limit": "10", "action": "file.deleted", "before_id": "6"},
    ]


def test_iterate_of_an_empty_log_asks_once(flavour: str) -> None:
    server = FakeAudit(range(0))
    client, _ = make_either(flavour, server)
    assert list(client.audit_events.iterate()) == [] and server.queries == [{"limit": "100"}]


def test_iterate_stops_on_a_server_whose_next_before_id_does_not_move(flavour: str) -> None:
    page = httpx.Response(200, json={"success": True, "events": [event(9), event(8)], "pagination": {"limit": 2, "next_before_id": 8}})
    handler, seen = sequence(page)
    client, _ = make_either(flavour, handler)
    yielded: list[int] = []
    with pytest.raises(fileshare.FileshareError, match="does not move past 8"):
        for item in client.audit_events.iterate(limit=2):
            yielded.append(item.event_id)
    assert yielded == [9, 8] and len(seen) == 2


def test_audit_reads_need_the_scope(flavour: str) -> None:
    handler, seen = sequence(scope_error("audit:read"))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.InsufficientScopeError) as caught:
        client.audit_events.list()
    assert caught.value.required_scope == "audit:read" and len(seen) == 1
    with pytest.raises(fileshare.InsufficientScopeError):
        list(client.audit_events.iterate())


def test_the_audit_event_record() -> None:
    full = fileshare.AuditEvent.from_json({**event(42, "file.deleted"), "request_id": "r-1"})
    assert (full.event_id, full.action, full.ip, full.user_agent) == (42, "file.deleted", "127.0.0.0", "fileshare-sdk-python/0.2.0")
    assert full.actor == fileshare.AuditActor(type="key", id=12, name="ci")
    assert full.target == fileshare.AuditTarget(type="file", id=7)
    assert full.details == {"filename": "a.txt", "size": 3} and full.extra == {"request_id": "r-1"}
    assert full.occurred_at == datetime(2026, 11, 27, 10, 5, tzinfo=timezone.utc)
    assert full.to_dict() == {**event(42, "file.deleted"), "request_id": "r-1"}

    bare = fileshare.AuditEvent.from_json(
        {"event_id": 1, "at": "2026-11-27 10:00:00", "action": "file.expired", "actor": {"type": "system", "id": None}, "ip": None, "user_agent": None, "target": None, "details": {}}
    )
    assert bare.actor == fileshare.AuditActor(type="system") and bare.target is None and bare.details == {}
    assert bare.ip is None and bare.user_agent is None
    with pytest.raises(fileshare.FileshareError, match="lacks actor"):
        fileshare.AuditEvent.from_json({"event_id": 1, "at": "2026-11-27 10:00:00", "action": "x"})
    with pytest.raises(TypeError):
        full.details["size"] = 4  # type: ignore[index]


def test_audit_list_has_a_raw_response(flavour: str) -> None:
    server = FakeAudit(range(1, 4))
    client, _ = make_either(flavour, server)
    raw = client.with_raw_response.audit_events.list(limit=2)
    assert raw.status_code == 200 and [e.event_id for e in raw.parse().events] == [3, 2]


def test_the_new_names_are_exported() -> None:
    for name in ("CurrentKey", "AuditEvent", "AuditActor", "AuditTarget", "AuditEventList", "AuditPagination", "AuditEvents", "AsyncAuditEvents", "InsufficientScopeError", "IpNotAllowedError", "Since"):
        assert name in fileshare.__all__ and hasattr(fileshare, name)
    assert issubclass(fileshare.InsufficientScopeError, fileshare.PermissionDeniedError)
    assert issubclass(fileshare.IpNotAllowedError, fileshare.PermissionDeniedError)
