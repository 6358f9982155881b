"""``client.webhooks``: the account's webhook endpoints and their deliveries (scope ``webhooks:manage``).

The verifier of the messages is :class:`fileshare.Webhooks`, which needs no client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from .. import _common as c
from .._errors import ConfigurationError, FileshareError
from .._records import Webhook, WebhookDelivery, WebhookDeliveryList, member

if TYPE_CHECKING:
    from ._client import AsyncClient


def _events(events: Sequence[str]) -> list[str]:
    if isinstance(events, str) or not isinstance(events, Sequence) or not all(isinstance(e, str) for e in events):
        raise ConfigurationError('events is a list of event types, e.g. ["file.uploaded"], or ["*"] for all')
    return list(events)


class AsyncWebhookEndpoints:
    """``client.webhooks``: the account's webhook endpoints (at most 20): create, list, get,
    update, delete, rotate_secret, test, and each one's deliveries. The key needs the scope
    ``webhooks:manage``. Check the messages an endpoint receives with :class:`fileshare.Webhooks`."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(
        self,
        *,
        url: str,
        events: Sequence[str],
        description: str | None = None,
        idempotency_key: str | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Webhook:
        """A new endpoint: the server POSTs the ``events`` (``["file.uploaded", "link.created"]``,
        or ``["*"]`` for every type) to ``url`` (https; at most 2,048 characters). The answer's
        ``secret`` (``whsec_...``) is shown this once: keep it for :class:`fileshare.Webhooks`.

        A URL the server refuses (not https, credentials in it, an address that is not public) is
        a ``BadRequestError`` with ``code == "webhook_url_not_allowed"``; the 21st endpoint a
        ``LimitExceededError`` (403 ``webhook_limit_exceeded``). Every attempt carries one
        ``Idempotency-Key`` (``idempotency_key``, else a new UUID), so a retry after a dropped
        connection never makes a second endpoint."""
        body = c.json_body(dict(url=url, events=_events(events), description=description), none_clears=False)
        key = c.idempotency_headers(idempotency_key)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", "/webhooks", body, headers=key)
        return Webhook.from_json(member(data, "webhook", "webhook object"))

    async def list(
        self,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> list[Webhook]:
        """The account's endpoints (without their secrets)."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", "/webhooks")
        webhooks = member(data, "webhooks", "list of webhooks")
        if not isinstance(webhooks, list):
            raise FileshareError("the answer holds no list of webhooks")
        return [Webhook.from_json(raw) for raw in webhooks]

    async def get(
        self,
        webhook_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Webhook:
        """One endpoint (without its secret)."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", c.id_path("webhooks", webhook_id))
        return Webhook.from_json(member(data, "webhook", "webhook object"))

    async def update(
        self,
        webhook_id: int | str,
        *,
        url: str | c.Unset = c.UNSET,
        events: Sequence[str] | c.Unset = c.UNSET,
        description: str | None | c.Unset = c.UNSET,
        enabled: bool | c.Unset = c.UNSET,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Webhook:
        """Changes an endpoint. An argument left out stays as it is; ``description=None`` clears
        it. ``enabled=True`` turns on an endpoint the server turned off (``disabled_reason``
        ``gone`` or ``failing``); ``enabled=False`` turns it off (``owner``)."""
        fields: dict[str, Any] = dict(url=url, events=events if isinstance(events, c.Unset) else _events(events), description=description, enabled=enabled)
        body = c.json_body(fields, none_clears=True)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("PATCH", c.id_path("webhooks", webhook_id), body)
        return Webhook.from_json(member(data, "webhook", "webhook object"))

    async def delete(
        self,
        webhook_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        """Deletes an endpoint; its pending deliveries are dropped."""
        await self._client._for_call(timeout, max_retries, extra_headers)._call("DELETE", c.id_path("webhooks", webhook_id))

    async def rotate_secret(
        self,
        webhook_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Webhook:
        """A new secret for an endpoint, in the answer's ``secret`` (shown this once). For 24 hours
        the old secret signs too (two signatures in ``webhook-signature``), so receivers can switch
        at their pace. Not sent again after a failure that may have rotated it (only after a 429 or
        503 that says nothing was done)."""
        client = self._client._for_call(timeout, max_retries, extra_headers)
        data = await client._call("POST", c.id_path("webhooks", webhook_id) + "/rotate-secret", retry=c.is_retryable_answer)
        return Webhook.from_json(member(data, "webhook", "webhook object"))

    async def test(
        self,
        webhook_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> str:
        """Sends a ``webhook.test`` event (``data: {"webhook_id": ...}``) to this endpoint only;
        answers its ``message_id`` (``msg_...``, the receiver's ``webhook-id``) at once, before the
        delivery: follow it in :meth:`deliveries`."""
        client = self._client._for_call(timeout, max_retries, extra_headers)
        data = await client._call("POST", c.id_path("webhooks", webhook_id) + "/test", retry=c.is_retryable_answer)
        message_id = member(data, "message_id", "message_id")
        if not isinstance(message_id, str):
            raise FileshareError("the answer's message_id is not a string")
        return message_id

    async def deliveries(
        self,
        webhook_id: int | str,
        *,
        limit: int | None = None,
        before_id: int | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> WebhookDeliveryList:
        """One page of an endpoint's deliveries, newest first (``limit`` 1 to 100): those whose
        ``delivery_id`` is below ``before_id`` (a page's ``pagination.next_before_id``). Each has
        its state, attempts, last status and error, and next attempt."""
        webhooks = self._client._for_call(timeout, max_retries, extra_headers).webhooks
        _, data = await webhooks._page(webhook_id, limit=limit, before_id=before_id)
        return WebhookDeliveryList.from_json(data)

    async def _page(self, webhook_id: int | str, *, limit: int | None, before_id: int | None) -> tuple[httpx.Response, Any]:
        client = self._client
        path = c.id_path("webhooks", webhook_id) + "/deliveries"
        return await client._request("GET", client._url(path, {"limit": limit, "before_id": before_id}))

    async def iterate_deliveries(
        self,
        webhook_id: int | str,
        *,
        limit: int = 100,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[WebhookDelivery]:
        """Every delivery of an endpoint (the last 30 days), newest first, ``limit`` per request,
        each page asked by the ``next_before_id`` of the one before: none is yielded twice. The
        options apply to each request."""
        webhooks = self._client._for_call(timeout, max_retries, extra_headers).webhooks
        below: int | None = None  # the last delivery yielded: every later one is older
        asked: int | None = None
        while True:
            _, data = await webhooks._page(webhook_id, limit=limit, before_id=asked)
            result = WebhookDeliveryList.from_json(data)
            for delivery in result.deliveries:
                if below is None or delivery.delivery_id < below:
                    below = delivery.delivery_id
                    yield delivery
            following = result.pagination.next_before_id
            if following is None:
                return
            if asked is not None and following >= asked:
                raise FileshareError(f"the server's next_before_id {following} does not move past {asked}")
            asked = following

    async def retry_delivery(
        self,
        webhook_id: int | str,
        delivery_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        """Sends a delivery again now (a ``failed`` one, or a ``pending`` one without waiting for its
        next attempt), with the same ``message_id``. The server answers 202 before it is sent."""
        path = c.id_path("webhooks", webhook_id) + c.id_path("deliveries", delivery_id) + "/retry"
        await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", path, retry=c.is_retryable_answer)
