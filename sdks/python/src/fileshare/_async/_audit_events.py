"""``client.audit_events``: the account's audit log (scope ``audit:read``), newest first."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from .. import _common as c
from .._errors import FileshareError
from .._records import AuditEvent, AuditEventList

if TYPE_CHECKING:
    from ._client import AsyncClient


class AsyncAuditEvents:
    """``client.audit_events``: what happened to the account (uploads, deletions, link changes,
    keys, sign-ins), newest first. The key needs the scope ``audit:read``."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def list(
        self,
        *,
        limit: int | None = None,
        before_id: int | None = None,
        action: str | None = None,
        since: c.Since | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> AuditEventList:
        """One page of events, newest first (``limit`` 1 to 100, the server's default 20): the
        events whose ``event_id`` is below ``before_id`` (a page's ``pagination.next_before_id``);
        ``action`` one action (``"file.deleted"``) or a family (``"file.*"``); ``since`` an aware
        datetime, a date or a UTC string (``YYYY-MM-DD``, ``YYYY-MM-DDTHH:MM:SSZ``): events at or
        after it. A value the server refuses is a ``BadRequestError`` (400 ``invalid_parameter``)."""
        events = self._client._for_call(timeout, max_retries, extra_headers).audit_events
        _, data = await events._page(limit=limit, before_id=before_id, action=action, since=since)
        return AuditEventList.from_json(data)

    async def _page(
        self, *, limit: int | None, before_id: int | None, action: str | None, since: c.Since | None
    ) -> tuple[httpx.Response, Any]:
        client = self._client
        query: dict[str, int | str | None] = {
            "limit": limit,
            "before_id": before_id,
            "action": action,
            "since": None if since is None else c.since_param(since),
        }
        return await client._request("GET", client._url("/audit-events", query))

    async def iterate(
        self,
        *,
        limit: int = 100,
        action: str | None = None,
        since: c.Since | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[AuditEvent]:
        """Every event (of ``action``, ``since`` as in :meth:`list`), newest first, ``limit`` per
        request, each page asked by the ``next_before_id`` of the one before: events logged
        meanwhile shift nothing, and none is yielded twice. The options apply to each request."""
        events = self._client._for_call(timeout, max_retries, extra_headers).audit_events
        async for event in events._iterate(limit, action, since):
            yield event

    async def _iterate(self, limit: int, action: str | None, since: c.Since | None) -> AsyncIterator[AuditEvent]:
        below: int | None = None  # the last event yielded: every later one is older
        asked: int | None = None
        while True:
            _, data = await self._page(limit=limit, before_id=asked, action=action, since=since)
            result = AuditEventList.from_json(data)
            for event in result.events:
                if below is None or event.event_id < below:
                    below = event.event_id
                    yield event
            following = result.pagination.next_before_id
            if following is None:
                return
            if asked is not None and following >= asked:
                raise FileshareError(f"the server's next_before_id {following} does not move past {asked}")
            asked = following
