"""``client.upload_requests``: links at which people without an account send files into the account
(scope ``requests:manage``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from .. import _common as c
from .._errors import FileshareError
from .._records import FileRecord, UploadRequest, UploadRequestFileList, member

if TYPE_CHECKING:
    from ._client import AsyncClient


class AsyncUploadRequests:
    """``client.upload_requests``: upload requests ("reverse shares"): a link (``url``) at which a
    guest without an account uploads files into this account, within the request's limits and
    until it expires. create, list, get, update, delete, close, and the files each one received.
    The key needs the scope ``requests:manage``."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(
        self,
        *,
        label: str,
        message: str | None = None,
        expires_in: c.Seconds | None = None,
        expires_at: c.Instant | None = None,
        max_files: int | None = None,
        max_file_size: int | None = None,
        max_total_size: int | None = None,
        password: str | None = None,
        file_expires_in: c.Seconds | None = None,
        idempotency_key: str | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> UploadRequest:
        """A new upload request: send its ``url`` to the guest.

        ``label`` (1 to 200 characters, one line) and ``message`` (plain text, up to 2,000
        characters) are shown to the guest. Exactly one of ``expires_in`` (seconds or a timedelta)
        and ``expires_at`` (an aware datetime or a UTC ``YYYY-MM-DD HH:MM:SS`` string) is required:
        at most 90 days ahead unless the operator allows more. ``max_files`` (1 to 10,000),
        ``max_file_size`` (bytes, at most the plan's), ``max_total_size`` (bytes) limit what it
        takes; ``password`` (8 to 1024 characters) is asked of the guest; ``file_expires_in``
        (seconds or a timedelta) is the life of each file received. A value the server refuses is
        a ``BadRequestError`` (400 ``invalid_parameter``, the message names the field).

        Every attempt carries one ``Idempotency-Key`` (``idempotency_key``, else a new UUID), so a
        retry after a dropped connection never makes a second request."""
        fields = dict(
            label=label,
            message=message,
            expires_in=expires_in,
            expires_at=expires_at,
            max_files=max_files,
            max_file_size=max_file_size,
            max_total_size=max_total_size,
            password=password,
            file_expires_in=file_expires_in,
        )
        body = c.json_body(fields, none_clears=False)
        key = c.idempotency_headers(idempotency_key)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", "/upload-requests", body, headers=key)
        return UploadRequest.from_json(member(data, "upload_request", "upload request object"))

    async def list(
        self,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> list[UploadRequest]:
        """Every upload request of the account (whatever its status), newest first."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", "/upload-requests")
        requests = member(data, "upload_requests", "list of upload requests")
        if not isinstance(requests, list):
            raise FileshareError("the answer holds no list of upload requests")
        return [UploadRequest.from_json(raw) for raw in requests]

    async def get(
        self,
        request_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> UploadRequest:
        """One upload request, with its counts (``files_received``, ``bytes_received``) and
        ``status``. An unknown one, or another account's, is a ``NotFoundError``."""
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("GET", c.id_path("upload-requests", request_id))
        return UploadRequest.from_json(member(data, "upload_request", "upload request object"))

    async def update(
        self,
        request_id: int | str,
        *,
        label: str | c.Unset = c.UNSET,
        message: str | None | c.Unset = c.UNSET,
        expires_in: c.Seconds | c.Unset = c.UNSET,
        expires_at: c.Instant | c.Unset = c.UNSET,
        max_files: int | None | c.Unset = c.UNSET,
        max_file_size: int | None | c.Unset = c.UNSET,
        max_total_size: int | None | c.Unset = c.UNSET,
        password: str | None | c.Unset = c.UNSET,
        file_expires_in: c.Seconds | None | c.Unset = c.UNSET,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> UploadRequest:
        """Changes an upload request (the rules of :meth:`create`). An argument left out stays as
        it is; ``None`` removes a ``message``, a limit, the ``password`` or ``file_expires_in``
        (``label`` and the expiry cannot be removed). A later expiry re-opens an ``expired``
        request; a ``closed`` one stays closed."""
        fields = dict(
            label=label,
            message=message,
            expires_in=expires_in,
            expires_at=expires_at,
            max_files=max_files,
            max_file_size=max_file_size,
            max_total_size=max_total_size,
            password=password,
            file_expires_in=file_expires_in,
        )
        body = c.json_body(fields, none_clears=True)
        path = c.id_path("upload-requests", request_id)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("PATCH", path, body)
        return UploadRequest.from_json(member(data, "upload_request", "upload request object"))

    async def delete(
        self,
        request_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> UploadRequest:
        """Deletes an upload request: its URL takes no more files. The files it received stay in
        the account. Answers the request as it was, ``status`` ``closed``."""
        path = c.id_path("upload-requests", request_id)
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("DELETE", path)
        return UploadRequest.from_json(member(data, "upload_request", "upload request object"))

    async def close(
        self,
        request_id: int | str,
        *,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> UploadRequest:
        """Closes an upload request at once (``status`` ``closed``): its URL takes no more files,
        and it stays listed with its files. Closing a closed request changes nothing, so the call
        is retried as a read is."""
        path = c.id_path("upload-requests", request_id) + "/close"
        data = await self._client._for_call(timeout, max_retries, extra_headers)._call("POST", path)
        return UploadRequest.from_json(member(data, "upload_request", "upload request object"))

    async def files(
        self,
        request_id: int | str,
        *,
        limit: int | None = None,
        before_id: int | None = None,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> UploadRequestFileList:
        """One page of the files an upload request received, newest first (``limit`` 1 to 100,
        the server's default 20): those whose ``file_id`` is below ``before_id`` (a page's
        ``pagination.next_before_id``). Each file's ``source`` is ``{type: "upload_request",
        request_id}``."""
        requests = self._client._for_call(timeout, max_retries, extra_headers).upload_requests
        _, data = await requests._page(request_id, limit=limit, before_id=before_id)
        return UploadRequestFileList.from_json(data)

    async def _page(self, request_id: int | str, *, limit: int | None, before_id: int | None) -> tuple[httpx.Response, Any]:
        client = self._client
        path = c.id_path("upload-requests", request_id) + "/files"
        return await client._request("GET", client._url(path, {"limit": limit, "before_id": before_id}))

    async def iterate_files(
        self,
        request_id: int | str,
        *,
        limit: int = 100,
        timeout: c.Timeout | c.Unset = c.UNSET,
        max_retries: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[FileRecord]:
        """Every file an upload request received (those still in the account), newest first,
        ``limit`` per request, each page asked by the ``next_before_id`` of the one before: files
        received meanwhile shift nothing, and none is yielded twice. The options apply to each
        request."""
        requests = self._client._for_call(timeout, max_retries, extra_headers).upload_requests
        below: int | None = None  # the last file yielded: every later one is older
        asked: int | None = None
        while True:
            _, data = await requests._page(request_id, limit=limit, before_id=asked)
            result = UploadRequestFileList.from_json(data)
            for file in result.files:
                if below is None or file.file_id < below:
                    below = file.file_id
                    yield file
            following = result.pagination.next_before_id
            if following is None:
                return
            if asked is not None and following >= asked:
                raise FileshareError(f"the server's next_before_id {following} does not move past {asked}")
            asked = following
