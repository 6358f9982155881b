"""Unit tests of ``files.download_archive`` with httpx.MockTransport: how often it asks again when
the server cuts the archive. An archive does not resume, so each attempt costs the whole download
from its first byte."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest

import fileshare
from mock_api import Handler, make_either

LENGTH = 10_000


class CutBody(httpx.SyncByteStream, httpx.AsyncByteStream):
    """``cut_at`` bytes of the archive, then the connection drops."""

    def __init__(self, cut_at: int) -> None:
        self.cut_at = cut_at

    def __iter__(self) -> Iterator[bytes]:
        yield bytes(self.cut_at)
        raise httpx.ReadError("connection reset")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield bytes(self.cut_at)
        raise httpx.ReadError("connection reset")


def cut_server(whole_after: int, cut_at: Callable[[int], int]) -> tuple[Handler, list[httpx.Request]]:
    """Cuts attempt n (from 1) after ``cut_at(n)`` bytes; from attempt ``whole_after`` + 1 on, sends the whole archive."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        headers = {"content-type": "application/zip", "content-length": str(LENGTH)}
        if len(seen) > whole_after:
            return httpx.Response(200, headers=headers, content=bytes(LENGTH))
        return httpx.Response(200, headers=headers, stream=CutBody(cut_at(len(seen))))

    return handler, seen


def test_the_retry_budget_is_never_given_back_even_when_each_cut_attempt_gets_further(flavour: str, tmp_path: Path) -> None:
    # A corrupt stored file cuts every attempt near the same offset, a little further each time
    # (socket chunking): the call must still stop after max_retries more attempts. The 20th would
    # succeed, so a budget given back on progress ends in a success here.
    handler, seen = cut_server(19, lambda n: 1000 + 100 * n)
    client, _ = make_either(flavour, handler, max_retries=2)
    target = tmp_path / "cut.zip"
    with pytest.raises(fileshare.APIConnectionError):
        client.files.download_archive([1, 2], target)
    assert len(seen) == 3
    assert all(r.method == "POST" and r.url.path.endswith("/files/archive") for r in seen)
    assert not target.exists()  # a path that did not get the whole archive is removed


def test_a_cut_archive_is_asked_again_from_its_first_byte_within_the_budget(flavour: str, tmp_path: Path) -> None:
    handler, seen = cut_server(2, lambda n: 3000)
    client, _ = make_either(flavour, handler, max_retries=2)
    target = tmp_path / "whole.zip"
    result = client.files.download_archive([1], target)
    assert result.size == LENGTH and target.stat().st_size == LENGTH
    assert len(seen) == 3
