"""``client.with_raw_response``: every call, answering a RawResponse (status, headers, the result)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import httpx

from .. import _common as c
from .._errors import FileshareError
from .._response import RawResponse

if TYPE_CHECKING:
    from ._audit_events import AsyncAuditEvents
    from ._client import AsyncClient
    from ._files import AsyncFiles
    from ._links import AsyncLinks
    from ._upload_requests import AsyncUploadRequests
    from ._webhook_endpoints import AsyncWebhookEndpoints

P = ParamSpec("P")
T = TypeVar("T")


def to_raw_response(call: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[RawResponse[T]]]:
    """``call``, answering its last HTTP answer beside its result."""

    async def raw(*args: P.args, **kwargs: P.kwargs) -> RawResponse[T]:
        responses: list[httpx.Response] = []
        token = c.CAPTURE.set(responses)
        try:
            result = await call(*args, **kwargs)
        finally:
            c.CAPTURE.reset(token)
        if not responses:
            raise FileshareError("the call sent no request")
        return RawResponse(responses, result)

    raw.__doc__ = call.__doc__
    return raw


class AsyncClientWithRawResponse:
    """``client.with_raw_response``: ``files``, ``links``, ``audit_events``, ``webhooks``,
    ``upload_requests``, ``stats``, ``key`` and ``download`` as on the client."""

    def __init__(self, client: AsyncClient) -> None:
        self.files = AsyncFilesWithRawResponse(client.files)
        self.links = AsyncLinksWithRawResponse(client.links)
        self.audit_events = AsyncAuditEventsWithRawResponse(client.audit_events)
        self.webhooks = AsyncWebhookEndpointsWithRawResponse(client.webhooks)
        self.upload_requests = AsyncUploadRequestsWithRawResponse(client.upload_requests)
        self.stats = to_raw_response(client.stats)
        self.key = to_raw_response(client.key)
        self.download = to_raw_response(client.download)


class AsyncFilesWithRawResponse:
    """``client.with_raw_response.files``. ``iterate`` is not here: it is many calls (use ``list``)."""

    def __init__(self, files: AsyncFiles) -> None:
        self.upload = to_raw_response(files.upload)
        self.list = to_raw_response(files.list)
        self.get = to_raw_response(files.get)
        self.update = to_raw_response(files.update)
        self.delete = to_raw_response(files.delete)


class AsyncLinksWithRawResponse:
    """``client.with_raw_response.links``."""

    def __init__(self, links: AsyncLinks) -> None:
        self.create = to_raw_response(links.create)
        self.list = to_raw_response(links.list)
        self.get = to_raw_response(links.get)
        self.update = to_raw_response(links.update)
        self.delete = to_raw_response(links.delete)
        self.rotate = to_raw_response(links.rotate)


class AsyncAuditEventsWithRawResponse:
    """``client.with_raw_response.audit_events``. ``iterate`` is not here: it is many calls (use ``list``)."""

    def __init__(self, audit_events: AsyncAuditEvents) -> None:
        self.list = to_raw_response(audit_events.list)


class AsyncWebhookEndpointsWithRawResponse:
    """``client.with_raw_response.webhooks``. ``iterate_deliveries`` is not here: it is many calls
    (use ``deliveries``)."""

    def __init__(self, webhooks: AsyncWebhookEndpoints) -> None:
        self.create = to_raw_response(webhooks.create)
        self.list = to_raw_response(webhooks.list)
        self.get = to_raw_response(webhooks.get)
        self.update = to_raw_response(webhooks.update)
        self.delete = to_raw_response(webhooks.delete)
        self.rotate_secret = to_raw_response(webhooks.rotate_secret)
        self.test = to_raw_response(webhooks.test)
        self.deliveries = to_raw_response(webhooks.deliveries)
        self.retry_delivery = to_raw_response(webhooks.retry_delivery)


class AsyncUploadRequestsWithRawResponse:
    """``client.with_raw_response.upload_requests``. ``iterate_files`` is not here: it is many calls
    (use ``files``)."""

    def __init__(self, upload_requests: AsyncUploadRequests) -> None:
        self.create = to_raw_response(upload_requests.create)
        self.list = to_raw_response(upload_requests.list)
        self.get = to_raw_response(upload_requests.get)
        self.update = to_raw_response(upload_requests.update)
        self.delete = to_raw_response(upload_requests.delete)
        self.close = to_raw_response(upload_requests.close)
        self.files = to_raw_response(upload_requests.files)
