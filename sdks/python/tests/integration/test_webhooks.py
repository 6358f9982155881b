"""Issue 33 against the real server, with both clients: client.webhooks end to end with a receiver on
127.0.0.1 (the launcher runs the server with FILESHARE_WEBHOOKS_ALLOW_PRIVATE=true and
FILESHARE_WEBHOOKS_ALLOW_HTTP=true): create (the secret once), list, get, update, test -> the
receiver gets a message that Webhooks(secret).verify accepts, deliveries shows it, a file.uploaded
event, rotate-secret -> two signatures, each secret's verifying, retry_delivery, delete; the
refusals (a bad field, a key without webhooks:manage, another account's endpoint)."""

from __future__ import annotations

import http.server
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import httpx
import pytest

import fileshare
from conftest import Factory


@dataclass(frozen=True)
class Message:
    path: str
    headers: httpx.Headers
    pairs: list[tuple[str, str]]
    body: bytes

    @property
    def message_id(self) -> str | None:
        """Its ``webhook-id``."""
        value: str | None = self.headers.get("webhook-id")
        return value


class Receiver:
    """An HTTP server on 127.0.0.1 that answers 200 to every POST and keeps what it got."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.changed = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                pairs = list(self.headers.items())
                message = Message(self.path, httpx.Headers(pairs), pairs, body)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()
                with receiver.changed:
                    receiver.messages.append(message)
                    receiver.changed.notify_all()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, test: Callable[[Message], bool], timeout: float = 30.0, count: int = 1) -> list[Message]:
        """The first ``count`` messages ``test`` accepts, once they came (else the test fails)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = [m for m in self.messages if test(m)]
                if len(found) >= count:
                    return found[:count]
                left = deadline - time.monotonic()
                assert left > 0, f"{count} message(s) expected within {timeout} s; got {[(m.path, m.message_id) for m in self.messages]}"
                self.changed.wait(left)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


def delivered(client: Any, webhook_id: int, message_id: str, timeout: float = 30.0) -> fileshare.WebhookDelivery:
    """The delivery of ``message_id`` once the server recorded its success."""
    deadline = time.monotonic() + timeout
    while True:
        found = [d for d in client.webhooks.iterate_deliveries(webhook_id, limit=2) if d.message_id == message_id]
        if found and found[0].state == "succeeded":
            return found[0]  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, f"no succeeded delivery of {message_id}: {found}"
        time.sleep(0.2)


def test_a_webhook_end_to_end(make_client: Factory, receiver: Receiver, flavour: str) -> None:
    client = make_client("pro")
    url = f"{receiver.url}/hooks/{flavour}"
    raw = client.with_raw_response.webhooks.create(url=url, events=["webhook.test", "file.uploaded"], description="sdk test")
    hook = raw.parse()
    assert raw.status_code == 201 and raw.headers["location"].endswith(f"/webhooks/{hook.webhook_id}")
    assert hook.secret is not None and hook.secret.startswith("whsec_") and hook.secret not in repr(hook)
    assert (hook.url, sorted(hook.events), hook.description, hook.enabled, hook.disabled_reason) == (url, ["file.uploaded", "webhook.test"], "sdk test", True, None)
    secret = hook.secret
    try:
        listed = [w for w in client.webhooks.list() if w.webhook_id == hook.webhook_id]
        assert listed == [hook] and listed[0].secret is None
        got = client.webhooks.get(hook.webhook_id)
        assert got == hook and got.secret is None and got.created == hook.created

        changed = client.webhooks.update(hook.webhook_id, description=None, events=["*"])
        assert (changed.description, changed.events) == (None, ["*"])
        off = client.webhooks.update(hook.webhook_id, enabled=False)
        assert (off.enabled, off.disabled_reason) == (False, "owner")
        on = client.webhooks.update(hook.webhook_id, enabled=True, events=["webhook.test", "file.uploaded"])
        assert (on.enabled, on.disabled_reason, sorted(on.events)) == (True, None, ["file.uploaded", "webhook.test"])

        # test -> the receiver gets a message that the verifier accepts
        message_id: str = client.webhooks.test(hook.webhook_id)
        assert message_id.startswith("msg_")
        [message] = receiver.wait_for(lambda m: m.message_id == message_id)
        assert message.path == f"/hooks/{flavour}" and message.headers["content-type"].startswith("application/json")
        assert message.headers["user-agent"].startswith("Fileshare-Webhooks")  # webhooks.md: Fileshare-Webhooks/<version>
        webhooks = fileshare.Webhooks(secret)
        event = webhooks.verify(message.body, message.headers)
        assert event["type"] == "webhook.test" and event["data"] == {"webhook_id": hook.webhook_id}
        assert webhooks.verify(message.body, dict(message.pairs)) == event  # the names as they came
        assert webhooks.verify(message.body.decode(), {k.upper(): v for k, v in message.pairs}) == event
        assert message.headers["webhook-signature"].count("v1,") == 1
        with pytest.raises(fileshare.WebhookVerificationError, match="no signature"):
            webhooks.verify(message.body + b" ", message.headers)

        delivery = delivered(client, hook.webhook_id, message_id)
        assert (delivery.event_type, delivery.last_status, delivery.last_error, delivery.next_attempt_at) == ("webhook.test", 200, None, None)
        assert delivery.attempts >= 1
        page = client.webhooks.deliveries(hook.webhook_id, limit=1)
        assert len(page.deliveries) == 1 and page.pagination.limit == 1

        # a real event: an upload
        uploaded = client.files.upload(b"webhook payload", filename=f"hook-{flavour}.txt")

        def of_the_upload(m: Message) -> bool:
            if m.path != f"/hooks/{flavour}":
                return False
            sent = webhooks.verify(m.body, m.headers)
            return bool(sent["type"] == "file.uploaded" and sent["data"]["file_id"] == uploaded.file_id)

        [upload_message] = receiver.wait_for(of_the_upload)
        record = fileshare.FileRecord.from_json(webhooks.verify(upload_message.body, upload_message.headers)["data"])
        assert (record.file_id, record.filename, record.sha256) == (uploaded.file_id, uploaded.filename, uploaded.sha256)
        client.files.delete(uploaded.file_id)

        # retry a delivery: the same message again
        client.webhooks.retry_delivery(hook.webhook_id, delivery.delivery_id)
        again = receiver.wait_for(lambda m: m.message_id == message_id, count=2)
        assert webhooks.verify(again[1].body, again[1].headers) == event

        # rotate-secret -> two signatures for 24 h: each secret verifies
        rotated = client.webhooks.rotate_secret(hook.webhook_id)
        assert rotated.secret is not None and rotated.secret.startswith("whsec_") and rotated.secret != secret
        assert client.webhooks.get(hook.webhook_id).secret is None
        second: str = client.webhooks.test(hook.webhook_id)
        [signed_twice] = receiver.wait_for(lambda m: m.message_id == second)
        assert signed_twice.headers["webhook-signature"].count("v1,") == 2
        new_event = fileshare.Webhooks(rotated.secret).verify(signed_twice.body, signed_twice.headers)
        assert new_event == fileshare.Webhooks(secret).verify(signed_twice.body, signed_twice.headers)
        assert new_event["type"] == "webhook.test"
    finally:
        assert client.webhooks.delete(hook.webhook_id) is None
    with pytest.raises(fileshare.NotFoundError):
        client.webhooks.get(hook.webhook_id)
    assert hook.webhook_id not in [w.webhook_id for w in client.webhooks.list()]


def test_the_refusals(make_client: Factory, receiver: Receiver, other_key: str, server: dict[str, Any]) -> None:
    client = make_client("pro", max_retries=0)
    with pytest.raises(fileshare.BadRequestError) as caught:
        client.webhooks.create(url=f"{receiver.url}/bad", events=["no.such.event"])
    assert caught.value.code == "invalid_parameter" and "events" in caught.value.message
    with pytest.raises(fileshare.BadRequestError) as caught:
        client.webhooks.create(url="ftp://example.com/hook", events=["*"])
    assert caught.value.code in ("invalid_parameter", "webhook_url_not_allowed")

    read_only = make_client(None, api_key=server["keys"]["read_only"], max_retries=0)
    with pytest.raises(fileshare.InsufficientScopeError) as scoped:
        read_only.webhooks.list()
    assert scoped.value.required_scope == "webhooks:manage"

    hook = client.webhooks.create(url=f"{receiver.url}/mine", events=["*"])
    try:
        other = make_client(None, api_key=other_key, max_retries=0)
        with pytest.raises(fileshare.NotFoundError):
            other.webhooks.get(hook.webhook_id)
        with pytest.raises(fileshare.NotFoundError):
            other.webhooks.test(hook.webhook_id)
        assert hook.webhook_id not in [w.webhook_id for w in other.webhooks.list()]
    finally:
        client.webhooks.delete(hook.webhook_id)
    with pytest.raises(fileshare.NotFoundError):
        client.webhooks.delete(hook.webhook_id)
