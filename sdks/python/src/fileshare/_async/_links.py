"""``client.links``: a file's links, each with its own URL, expiry, download limit and password."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import _common as c
from .._errors import FileshareError
from .._records import Link, member

if TYPE_CHECKING:
    from ._client import AsyncClient


class AsyncLinks:
    """``client.links``: a file's links, each with its own URL, expiry, download limit and password."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(
        self,
        file_id: int | str,
        *,
        label: str | None = None,
        expires_in: c.Seconds | None = None,
        expires_at: c.Instant | None = None,
        max_downloads: int | None = None,
        password: str | None = None,
        idempotency_key: str | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Link:
        """A new link to a file (without arguments: a link with no policy).

        ``expires_in`` (seconds or a timedelta) or ``expires_at`` (an aware datetime or a UTC
        ``YYYY-MM-DD HH:MM:SS`` string), not both; ``max_downloads`` counts downloads through the
        link; ``password`` (8 to 1024 characters) is asked by ``download(..., password=)`` and by
        the link's page. Every attempt carries one ``Idempotency-Key`` (``idempotency_key``, else a
        new UUID), so a retry after a dropped connection never makes a second link."""
        fields = dict(label=label, expires_in=expires_in, expires_at=expires_at, max_downloads=max_downloads, password=password)
        body = c.json_body(fields, none_clears=False)
        key = c.idempotency_headers(idempotency_key)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", c.id_path("files", file_id) + "/links", body, headers=key)
        return Link.from_json(member(data, "link", "link object"))

    async def list(
        self,
        file_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> list[Link]:
        """A file's links: the default link first, then the newest first (revoked ones for 30 days)."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", c.id_path("files", file_id) + "/links")
        links = member(data, "links", "list of links")
        if not isinstance(links, list):
            raise FileshareError("the answer holds no list of links")
        return [Link.from_json(raw) for raw in links]

    async def get(
        self,
        link_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Link:
        """One link."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", c.id_path("links", link_id))
        return Link.from_json(member(data, "link", "link object"))

    async def update(
        self,
        link_id: int | str,
        *,
        label: str | None | c.Unset = c.UNSET,
        expires_in: c.Seconds | c.Unset = c.UNSET,
        expires_at: c.Instant | None | c.Unset = c.UNSET,
        max_downloads: int | None | c.Unset = c.UNSET,
        password: str | None | c.Unset = c.UNSET,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Link:
        """Changes a link's policy. An argument left out stays as it is; ``None`` clears it (no
        label, no expiry, no download limit, no password). ``max_downloads`` cannot go below the
        link's ``download_count``."""
        fields = dict(label=label, expires_in=expires_in, expires_at=expires_at, max_downloads=max_downloads, password=password)
        body = c.json_body(fields, none_clears=True)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("PATCH", c.id_path("links", link_id), body)
        return Link.from_json(member(data, "link", "link object"))

    async def delete(
        self,
        link_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        """Revokes a link: its URL answers 404 at once. The default link cannot be deleted
        (``BadRequestError``, 409 ``default_link_required``): rotate it instead."""
        await self._client._for_call(timeout, max_retries, extra_headers)._call("DELETE", c.id_path("links", link_id))

    async def rotate(
        self,
        link_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Link:
        """Gives a link a new URL (the old one answers 404 at once); its policy and counts stay.
        Rotating the default link changes the file's ``public_link``."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", c.id_path("links", link_id) + "/rotate", retry=c.is_retryable_answer)
        return Link.from_json(member(data, "link", "link object"))

