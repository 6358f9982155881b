"""Unit tests of client.webhooks (issue 33) with httpx.MockTransport, sync and async: what each call
sends (explicit null vs left out, the idempotency key of create), what is retried and what is not,
the errors of the sheet (webhook_url_not_allowed, webhook_limit_exceeded, not_found,
insufficient_scope), deliveries by page and iterate_deliveries by next_before_id, the Webhook and
WebhookDelivery records, and the raw responses."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any, Callable
from urllib.parse import parse_qsl

import httpx
import pytest

import fileshare
from mock_api import error, make, make_either, sequence

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
WEBHOOK: dict[str, Any] = {
    "webhook_id": 3,
    "url": "https://hooks.example.com/fileshare",
    "events": ["file.uploaded", "link.created"],
    "description": "the CRM",
    "enabled": True,
    "disabled_reason": None,
    "created_at": "2026-11-27 10:00:00",
}
CREATED: dict[str, Any] = {**WEBHOOK, "secret": SECRET}


def delivery(delivery_id: int, state: str = "succeeded", **changes: Any) -> dict[str, Any]:
    return {
        "delivery_id": delivery_id,
        "event_type": "file.uploaded",
        "message_id": f"msg_{delivery_id:04d}",
        "attempts": 1,
        "last_status": 200,
        "last_error": None,
        "next_attempt_at": None,
        "state": state,
        "created_at": "2026-11-27 10:05:00",
        **changes,
    }


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
    handler, seen = sequence(
        answer(201, {"location": "/api/v1/webhooks/3"}, webhook=CREATED),
        answer(webhooks=[WEBHOOK, {**WEBHOOK, "webhook_id": 4, "events": ["*"], "description": None}]),
        answer(webhook=WEBHOOK),
        answer(webhook={**WEBHOOK, "enabled": False, "disabled_reason": "owner"}),
        answer(message="Webhook deleted"),
        answer(webhook={**WEBHOOK, "secret": "whsec_bmV3IHNlY3JldA=="}),
        answer(202, message_id="msg_test1"),
        answer(deliveries=[delivery(9)], pagination={"limit": 20, "next_before_id": None}),
        answer(202),
    )
    client, _ = make_either(flavour, handler)
    created = client.webhooks.create(url=WEBHOOK["url"], events=("file.uploaded", "link.created"), description="the CRM")
    assert created.secret == SECRET and created == fileshare.Webhook.from_json(CREATED)
    webhooks = client.webhooks.list()
    assert [(w.webhook_id, w.events, w.secret) for w in webhooks] == [(3, ["file.uploaded", "link.created"], None), (4, ["*"], None)]
    assert client.webhooks.get(3) == fileshare.Webhook.from_json(WEBHOOK)
    updated = client.webhooks.update("3", enabled=False)
    assert (updated.enabled, updated.disabled_reason) == (False, "owner")
    assert client.webhooks.delete(3) is None
    assert client.webhooks.rotate_secret(3).secret == "whsec_bmV3IHNlY3JldA=="
    assert client.webhooks.test(3) == "msg_test1"
    page = client.webhooks.deliveries(3)
    assert [d.message_id for d in page.deliveries] == ["msg_0009"] and page.pagination.next_before_id is None
    assert client.webhooks.retry_delivery(3, 9) is None
    assert [sent(r) for r in seen] == [
        ("POST", "/api/v1/webhooks", {"url": WEBHOOK["url"], "events": ["file.uploaded", "link.created"], "description": "the CRM"}),
        ("GET", "/api/v1/webhooks", None),
        ("GET", "/api/v1/webhooks/3", None),
        ("PATCH", "/api/v1/webhooks/3", {"enabled": False}),
        ("DELETE", "/api/v1/webhooks/3", None),
        ("POST", "/api/v1/webhooks/3/rotate-secret", None),
        ("POST", "/api/v1/webhooks/3/test", None),
        ("GET", "/api/v1/webhooks/3/deliveries", None),
        ("POST", "/api/v1/webhooks/3/deliveries/9/retry", None),
    ]
    assert all(r.headers["authorization"].startswith("Bearer fsk_") for r in seen)


def test_create_leaves_out_a_description_not_given(flavour: str) -> None:
    handler, seen = sequence(answer(201, webhook={**CREATED, "events": ["*"], "description": None}))
    client, _ = make_either(flavour, handler)
    created = client.webhooks.create(url="https://hooks.example.com/all", events=["*"])
    assert created.events == ["*"] and created.description is None
    assert sent(seen[0])[2] == {"url": "https://hooks.example.com/all", "events": ["*"]}


def test_update_sends_only_the_arguments_given_and_none_clears(flavour: str) -> None:
    handler, seen = sequence(answer(webhook=WEBHOOK))
    client, _ = make_either(flavour, handler)
    client.webhooks.update(3, description=None)
    client.webhooks.update(3, url="https://hooks.example.com/v2", events=["file.deleted"], enabled=True)
    client.webhooks.update(3)
    assert [sent(r)[2] for r in seen] == [
        {"description": None},
        {"url": "https://hooks.example.com/v2", "events": ["file.deleted"], "enabled": True},
        {},
    ]


@pytest.mark.parametrize("events", ["file.uploaded", [1, 2], None, {"file.uploaded": True}], ids=["str", "ints", "none", "dict"])
def test_events_must_be_a_list_of_types(flavour: str, events: Any) -> None:
    handler, seen = sequence(answer(201, webhook=CREATED))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.ConfigurationError, match="events is a list"):
        client.webhooks.create(url="https://hooks.example.com/x", events=events)
    with pytest.raises(fileshare.ConfigurationError, match="events is a list"):
        client.webhooks.update(3, events=events)
    assert seen == []


@pytest.mark.parametrize("bad", [0, -1, "3a", "", True, "../files"])
def test_ids_are_checked_before_anything_is_sent(flavour: str, bad: Any) -> None:
    handler, seen = sequence(answer(webhook=WEBHOOK))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.ConfigurationError, match="webhook id is a positive integer"):
        client.webhooks.get(bad)
    with pytest.raises(fileshare.ConfigurationError, match="delivery id is a positive integer"):
        client.webhooks.retry_delivery(3, bad)
    assert seen == []


# -- retries -----------------------------------------------------------------------------------


def test_create_sends_one_idempotency_key_on_every_attempt(flavour: str) -> None:
    handler, seen = sequence(httpx.ConnectError("dropped"), error(503, "unavailable"), answer(201, webhook=CREATED))
    client, sleeps = make_either(flavour, handler)
    assert client.webhooks.create(url=WEBHOOK["url"], events=["*"]).secret == SECRET
    keys = {r.headers["idempotency-key"] for r in seen}
    assert len(seen) == 3 and len(sleeps) == 2 and len(keys) == 1
    uuid.UUID(keys.pop())
    handler, seen = sequence(answer(201, webhook=CREATED))
    client, _ = make_either(flavour, handler)
    client.webhooks.create(url=WEBHOOK["url"], events=["*"], idempotency_key="crm-hook-1")
    assert seen[0].headers["idempotency-key"] == "crm-hook-1"


@pytest.mark.parametrize("call", ["rotate_secret", "test", "retry_delivery"])
def test_posts_that_act_are_not_sent_again_after_an_unclear_failure(flavour: str, call: str) -> None:
    args = (3, 9) if call == "retry_delivery" else (3,)
    failures: list[httpx.Response | Exception] = [httpx.ConnectError("dropped"), error(500, "internal_error"), error(502, "bad_gateway")]
    for failure in failures:
        handler, seen = sequence(failure, answer(202, message_id="msg_x", webhook=CREATED))
        client, sleeps = make_either(flavour, handler)
        with pytest.raises((fileshare.APIConnectionError, fileshare.ServerError)):
            getattr(client.webhooks, call)(*args)
        assert len(seen) == 1 and sleeps == [] and "idempotency-key" not in seen[0].headers
    # a 503 or a 429 says nothing was done: those are sent again
    handler, seen = sequence(error(503, "unavailable"), error(429, "rate_limited", {"retry-after": "1"}), answer(202, message_id="msg_x", webhook=CREATED))
    client, sleeps = make_either(flavour, handler)
    getattr(client.webhooks, call)(*args)
    assert len(seen) == 3 and sleeps[1] == 1


def test_reads_updates_and_deletes_are_retried(flavour: str) -> None:
    handler, seen = sequence(error(502, "bad_gateway"), httpx.ReadTimeout("slow"), answer(webhook=WEBHOOK))
    client, sleeps = make_either(flavour, handler, max_retries=3)
    client.webhooks.update(3, enabled=True)
    assert len(seen) == 3 and [sent(r)[2] for r in seen] == [{"enabled": True}] * 3
    handler, seen = sequence(error(503, "unavailable"), answer(message="deleted"))
    client, _ = make_either(flavour, handler)
    client.webhooks.delete(3)
    assert len(seen) == 2


# -- errors ------------------------------------------------------------------------------------


def test_the_errors_of_the_sheet(flavour: str) -> None:
    cases: list[tuple[httpx.Response, type[fileshare.FileshareError], str]] = [
        (error(400, "webhook_url_not_allowed"), fileshare.BadRequestError, "webhook_url_not_allowed"),
        (error(400, "invalid_parameter"), fileshare.BadRequestError, "invalid_parameter"),
        (error(403, "webhook_limit_exceeded"), fileshare.LimitExceededError, "webhook_limit_exceeded"),
        (error(404, "not_found"), fileshare.NotFoundError, "not_found"),
    ]
    for response, kind, code in cases:
        handler, seen = sequence(response, answer(201, webhook=CREATED))
        client, sleeps = make_either(flavour, handler)
        with pytest.raises(kind) as caught:
            client.webhooks.create(url="http://10.0.0.1/hook", events=["*"])
        assert (caught.value.code, caught.value.request_id) == (code, "req-1")
        assert len(seen) == 1 and sleeps == []


def test_a_key_without_webhooks_manage(flavour: str) -> None:
    refusal = httpx.Response(
        403,
        json={"success": False, "error": {"code": "insufficient_scope", "message": "lacks webhooks:manage", "required_scope": "webhooks:manage"}},
        headers={"www-authenticate": 'Bearer error="insufficient_scope", scope="webhooks:manage"'},
    )
    handler, seen = sequence(refusal)
    client, _ = make_either(flavour, handler)
    calls: list[Callable[[], Any]] = [client.webhooks.list, lambda: client.webhooks.test(3), lambda: list(client.webhooks.iterate_deliveries(3))]
    for call in calls:
        with pytest.raises(fileshare.InsufficientScopeError) as caught:
            call()
        assert caught.value.required_scope == "webhooks:manage"
    assert len(seen) == 3


def test_answers_without_what_was_asked_are_errors(flavour: str) -> None:
    handler, _ = sequence(answer(webhooks={"not": "a list"}), answer(), answer(202, message_id=7), answer(deliveries=[]))
    client, _ = make_either(flavour, handler)
    with pytest.raises(fileshare.FileshareError, match="no list of webhooks"):
        client.webhooks.list()
    with pytest.raises(fileshare.FileshareError, match="no webhook object"):
        client.webhooks.get(3)
    with pytest.raises(fileshare.FileshareError, match="message_id is not a string"):
        client.webhooks.test(3)
    with pytest.raises(fileshare.FileshareError, match="no list of webhook deliveries"):
        client.webhooks.deliveries(3)


# -- deliveries --------------------------------------------------------------------------------


class FakeDeliveries:
    """``GET /webhooks/3/deliveries`` over deliveries 1..n (newest first), by ``before_id``."""

    def __init__(self, ids: range) -> None:
        self.ids = sorted(ids, reverse=True)
        self.queries: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert (request.method, request.url.path) == ("GET", "/api/v1/webhooks/3/deliveries")
        query = dict(parse_qsl(request.url.query.decode()))
        self.queries.append(query)
        limit = int(query.get("limit", "20"))
        below = int(query["before_id"]) if "before_id" in query else None
        chosen = [i for i in self.ids if below is None or i < below][:limit]
        more = bool(chosen) and any(i < chosen[-1] for i in self.ids)
        pagination = {"limit": limit, "next_before_id": chosen[-1] if more else None}
        return answer(deliveries=[delivery(i) for i in chosen], pagination=pagination)


def test_deliveries_sends_only_the_paging_given(flavour: str) -> None:
    server = FakeDeliveries(range(1, 8))
    client, _ = make_either(flavour, server)
    page = client.webhooks.deliveries(3, limit=3, before_id=6)
    assert server.queries == [{"limit": "3", "before_id": "6"}]
    assert [d.delivery_id for d in page.deliveries] == [5, 4, 3]
    assert page.pagination == fileshare.WebhookDeliveryPagination(limit=3, next_before_id=3)


def test_iterate_deliveries_pages_by_next_before_id(flavour: str) -> None:
    server = FakeDeliveries(range(1, 26))
    client, _ = make_either(flavour, server)
    assert [d.delivery_id for d in client.webhooks.iterate_deliveries(3, limit=10)] == list(range(25, 0, -1))
    assert server.queries == [{"limit": "10"}, {"limit": "10", "before_id": "16"}, {"limit": "10", "before_id": "6"}]
    server = FakeDeliveries(range(0))
    client, _ = make_either(flavour, server)
    assert list(client.webhooks.iterate_deliveries(3)) == [] and server.queries == [{"limit": "100"}]


def test_iterate_deliveries_stops_on_a_server_whose_next_before_id_does_not_move(flavour: str) -> None:
    page = answer(deliveries=[delivery(9), delivery(8)], pagination={"limit": 2, "next_before_id": 8})
    handler, seen = sequence(page)
    client, _ = make_either(flavour, handler)
    yielded: list[int] = []
    with pytest.raises(fileshare.FileshareError, match="does not move past 8"):
        for item in client.webhooks.iterate_deliveries(3, limit=2):
            yielded.append(item.delivery_id)
    assert yielded == [9, 8] and len(seen) == 2


# -- the records -------------------------------------------------------------------------------


def test_the_webhook_record() -> None:
    created = fileshare.Webhook.from_json({**CREATED, "success": True, "signing": "v1"})
    assert created.secret == SECRET and created.extra == {"signing": "v1"}
    assert SECRET not in repr(created) and "MfKQ" not in repr(created) and "hooks.example.com" in repr(created)
    assert created.created == datetime(2026, 11, 27, 10, 0, tzinfo=timezone.utc)
    assert created.to_dict() == {**CREATED, "signing": "v1"}
    listed = fileshare.Webhook.from_json(WEBHOOK)
    assert listed.secret is None and listed == created  # the secret is not what tells them apart
    assert listed.to_dict() == WEBHOOK and json.loads(listed.to_json()) == WEBHOOK
    gone = fileshare.Webhook.from_json({**WEBHOOK, "enabled": False, "disabled_reason": "gone"})
    assert (gone.enabled, gone.disabled_reason) == (False, "gone")
    with pytest.raises(fileshare.FileshareError, match="lacks enabled, disabled_reason"):
        fileshare.Webhook.from_json({k: v for k, v in WEBHOOK.items() if k not in ("enabled", "disabled_reason")})
    with pytest.raises(fileshare.FileshareError, match="events is not a list of strings"):
        fileshare.Webhook.from_json({**WEBHOOK, "events": "*"})
    with pytest.raises(AttributeError):
        created.secret = None  # type: ignore[misc]


def test_the_webhook_delivery_record() -> None:
    pending = fileshare.WebhookDelivery.from_json(
        delivery(4, "pending", attempts=2, last_status=None, last_error="timeout after 15 s", next_attempt_at="2026-11-27 10:10:00", hint="x")
    )
    assert (pending.state, pending.attempts, pending.last_status, pending.last_error) == ("pending", 2, None, "timeout after 15 s")
    assert pending.next_attempt == datetime(2026, 11, 27, 10, 10, tzinfo=timezone.utc)
    assert pending.created == datetime(2026, 11, 27, 10, 5, tzinfo=timezone.utc)
    assert pending.extra == {"hint": "x"} and pending.to_dict()["hint"] == "x"
    done = fileshare.WebhookDelivery.from_json(delivery(5))
    assert done.next_attempt is None and done.last_status == 200
    with pytest.raises(fileshare.FileshareError, match="lacks message_id"):
        fileshare.WebhookDelivery.from_json({k: v for k, v in delivery(5).items() if k != "message_id"})


# -- raw responses and names -------------------------------------------------------------------


def test_raw_responses_of_the_webhook_calls(flavour: str) -> None:
    handler, _ = sequence(
        answer(201, {"location": "/api/v1/webhooks/3", "x-request-id": "req-w"}, webhook=CREATED),
        answer(202, message_id="msg_t"),
        answer(deliveries=[delivery(2)], pagination={"limit": 1, "next_before_id": None}),
    )
    client, _ = make_either(flavour, handler)
    raw = client.with_raw_response.webhooks.create(url=WEBHOOK["url"], events=["*"])
    assert (raw.status_code, raw.headers["location"], raw.request_id) == (201, "/api/v1/webhooks/3", "req-w")
    assert raw.parse().secret == SECRET
    raw_test = client.with_raw_response.webhooks.test(3)
    assert raw_test.status_code == 202 and raw_test.parse() == "msg_t"
    assert client.with_raw_response.webhooks.deliveries(3, limit=1).parse().deliveries[0].delivery_id == 2


def test_with_options_keeps_webhooks() -> None:
    handler, seen = sequence(answer(webhooks=[]))
    client, _ = make(handler)
    assert client.with_options(max_retries=0).webhooks.list() == []
    assert client.webhooks.list(extra_headers={"x-trace": "1"}) == [] and seen[-1].headers["x-trace"] == "1"


def test_the_new_names_are_exported() -> None:
    for name in ("Webhook", "WebhookDelivery", "WebhookDeliveryList", "WebhookDeliveryPagination", "WebhookEndpoints", "AsyncWebhookEndpoints"):
        assert name in fileshare.__all__ and hasattr(fileshare, name)
    # the resource (client.webhooks) and the verifier (fileshare.Webhooks) are apart
    handler, _ = sequence(answer(webhooks=[]))
    assert isinstance(make(handler)[0].webhooks, fileshare.WebhookEndpoints)
    assert isinstance(fileshare.AsyncClient("https://f.example/api/v1", "fsk_x").webhooks, fileshare.AsyncWebhookEndpoints)
