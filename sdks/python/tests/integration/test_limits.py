"""The "limited" account (1 MiB files, 3 uploads a day, 10 requests a minute). Its budgets are
shared by both clients, so the tests run in this order: limits (sync, then async), then the rate."""

from __future__ import annotations

from typing import Any

import pytest

import fileshare
from helpers import BlockingAsync


def _clients(server: dict[str, Any]) -> list[Any]:
    options = {"base_url": server["base_url"], "api_key": server["keys"]["limited"], "max_retries": 0}
    return [fileshare.Client(**options), BlockingAsync(fileshare.AsyncClient(**options))]


def test_limit_exceeded_and_rate_limit(server: dict[str, Any]) -> None:
    limits = server["limits"]["limited"]
    clients = _clients(server)
    try:
        for number, client in enumerate(clients):
            # Sync: one byte over (refused while it streams). Async, once the daily uploads are used:
            # over by more than the 64 KiB allowance, refused on its declared length before the slot.
            too_big = bytes(limits["max_file_size"] + (1 if number == 0 else 128 * 1024))
            with pytest.raises(fileshare.LimitExceededError) as multipart:
                client.files.upload(too_big, filename="big.bin", resumable=False)
            assert (multipart.value.status, multipart.value.code) == (403, "file_too_large")
            with pytest.raises(fileshare.LimitExceededError) as tus:
                client.files.upload(too_big, filename="big.bin", resumable=True)
            assert (tus.value.status, tus.value.code) == (413, "file_too_large")
            if number == 0:
                for i in range(limits["daily_uploads"]):
                    client.files.upload(bytes([i]), filename=f"day-{i}.bin")
            with pytest.raises(fileshare.LimitExceededError) as daily:
                client.files.upload(b"9", filename="one-too-many.bin")
            assert (daily.value.status, daily.value.code) == (403, "daily_upload_limit_exceeded")

        for client in clients:
            error: fileshare.RateLimitError | None = None
            for _ in range(limits["requests_per_minute"] + 1):
                try:
                    client.files.list(limit=1)
                except fileshare.RateLimitError as caught:
                    error = caught
                    break
            assert error is not None, "no 429 within the minute's budget"
            assert (error.status, error.code) == (429, "rate_limited")
            assert error.retry_after is not None and error.retry_after > 0
            assert error.rate_limit.limit == limits["requests_per_minute"] and error.rate_limit.remaining == 0
            assert error.rate_limit.reset is not None and error.rate_limit.reset > 0
    finally:
        for client in clients:
            client.close()
