"""Unit tests of issue 35 (virus scanning) with httpx.MockTransport: FileRecord.scan for each status
(and null, and a server that sends none), 403 ``file_not_scannable`` as a limit, 409
``scan_pending`` as ScanPendingError, which download() waits out (Retry-After) within its budget."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

import fileshare
from fileshare._errors import LIMIT_CODES, error_from_response
from mock_api import FILE, error, make_either, sequence

LINK = "https://files.example.com/download/tok"
GRANT = "https://files.example.com/download/tok/g1"


def scanned(status: str, signature: str | None = None, scanned_at: str | None = "2026-12-01 10:00:05") -> dict[str, Any]:
    return {**FILE, "scan": {"status": status, "signature": signature, "scanned_at": scanned_at}}


# -- the record --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "signature", "scanned_at"),
    [
        ("pending", None, None),
        ("clean", None, "2026-12-01 10:00:05"),
        ("infected", "Win.Test.EICAR_HDB-1", "2026-12-01 10:00:05"),
        ("error", None, "2026-12-01 10:00:05"),
        ("skipped", None, None),
    ],
)
def test_the_scan_of_each_status_parses(status: str, signature: str | None, scanned_at: str | None) -> None:
    raw = scanned(status, signature, scanned_at)
    record = fileshare.FileRecord.from_json(raw)
    assert isinstance(record.scan, fileshare.FileScan)
    assert (record.scan.status, record.scan.signature, record.scan.scanned_at) == (status, signature, scanned_at)
    assert record.scan.done is (status != "pending")
    if scanned_at is None:
        assert record.scan.scanned is None
    else:
        assert record.scan.scanned == datetime(2026, 12, 1, 10, 0, 5, tzinfo=timezone.utc)
    assert record.to_dict() == {**raw, "expires_at": None}
    assert json.loads(record.to_json())["scan"] == raw["scan"]
    assert getattr(fileshare.FileScan, status.upper()) == status  # the status constants


def test_scan_null_and_a_server_that_sends_none() -> None:
    off = fileshare.FileRecord.from_json({**FILE, "scan": None})  # a server that does not scan
    assert off.scan is None and off.to_dict()["scan"] is None
    older = fileshare.FileRecord.from_json(FILE)  # a server before scanning
    assert older.scan is None and "scan" not in older.extra


def test_a_scan_with_fields_or_a_status_this_sdk_does_not_know() -> None:
    raw = {**FILE, "scan": {"status": "quarantined", "signature": None, "scanned_at": None, "engine": "clamav"}}
    record = fileshare.FileRecord.from_json(raw)
    assert record.scan is not None and record.scan.status == "quarantined" and record.scan.extra == {"engine": "clamav"}
    assert record.to_dict()["scan"] == raw["scan"]
    minimal = fileshare.FileRecord.from_json({**FILE, "scan": {"status": "pending"}})
    assert minimal.scan == fileshare.FileScan("pending")
    with pytest.raises(fileshare.FileshareError, match="file scan lacks status"):
        fileshare.FileRecord.from_json({**FILE, "scan": {"signature": None}})


def test_the_scan_is_on_the_records_of_every_call(flavour: str) -> None:
    infected = scanned("infected", "Win.Test.EICAR_HDB-1")
    page = {"success": True, "files": [scanned("clean")], "pagination": {"page": 1, "limit": 20, "total": 1, "pages": 1}}
    handler, _ = sequence(
        httpx.Response(200, json={"success": True, "file": infected}),
        httpx.Response(200, json=page),
    )
    client, _ = make_either(flavour, handler)
    got = client.files.get(7)
    assert got.scan == fileshare.FileScan("infected", "Win.Test.EICAR_HDB-1", "2026-12-01 10:00:05")
    listed = client.files.list()
    assert listed.files[0].scan is not None and listed.files[0].scan.status == fileshare.FileScan.CLEAN


def test_an_upload_answer_with_a_pending_scan(flavour: str) -> None:
    handler, _ = sequence(httpx.Response(201, json={"success": True, **scanned("pending", None, None)}))
    client, _ = make_either(flavour, handler)
    record = client.files.upload(b"hello", filename="a.txt")
    assert record.scan is not None and record.scan.status == "pending" and not record.scan.done


def test_the_new_names_are_exported() -> None:
    for name in ("FileScan", "ScanPendingError"):
        assert name in fileshare.__all__ and hasattr(fileshare, name)


# -- the errors --------------------------------------------------------------------------------


def _error(status: int, code: str, headers: dict[str, str] | None = None) -> fileshare.FileshareError:
    body = json.dumps({"success": False, "error": {"code": code, "message": f"{code} happened"}}).encode()
    return error_from_response(status, httpx.Headers({"x-request-id": "req-1", **(headers or {})}), body)


def test_file_not_scannable_is_a_limit() -> None:
    assert "file_not_scannable" in LIMIT_CODES
    found = _error(403, "file_not_scannable")
    assert isinstance(found, fileshare.LimitExceededError) and not isinstance(found, fileshare.PermissionDeniedError)
    assert (found.status, found.code, found.request_id) == (403, "file_not_scannable", "req-1")


def test_scan_pending_is_a_scan_pending_error_with_retry_after() -> None:
    found = _error(409, "scan_pending", {"retry-after": "10"})
    assert isinstance(found, fileshare.ScanPendingError) and isinstance(found, fileshare.BadRequestError)
    assert (found.status, found.code, found.retry_after) == (409, "scan_pending", 10)
    # other 409s stay plain BadRequestErrors
    other = _error(409, "default_link_required")
    assert type(other) is fileshare.BadRequestError


def test_an_upload_refused_as_not_scannable_is_not_retried(flavour: str) -> None:
    handler, seen = sequence(error(403, "file_not_scannable"), httpx.Response(201, json={"success": True, **FILE}))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.LimitExceededError) as caught:
        client.files.upload(b"hello", filename="a.txt")
    assert caught.value.code == "file_not_scannable" and len(seen) == 1 and sleeps == []


# -- downloads: 409 scan_pending is waited out, within the retry budget ---------------------------


def _pending_then_served(pending_posts: int, pending_gets: int = 0) -> tuple[Any, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    counts = {"POST": 0, "GET": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        counts[request.method] = counts.get(request.method, 0) + 1
        pending = error(409, "scan_pending", {"retry-after": "10"})
        if request.method == "POST":
            if counts["POST"] <= pending_posts:
                return pending
            return httpx.Response(303, json={"success": True, "download_url": GRANT}, headers={"location": GRANT})
        if counts["GET"] <= pending_gets:
            return pending
        return httpx.Response(200, content=b"hello", headers={"etag": f'"{hashlib.sha256(b"hello").hexdigest()}"'})

    return handler, seen


def test_a_download_waits_out_scan_pending_on_the_link(flavour: str, tmp_path: Path) -> None:
    handler, seen = _pending_then_served(pending_posts=2)
    client, sleeps = make_either(flavour, handler)
    result = client.download(LINK, tmp_path / "a.txt")
    assert result.size == 5 and (tmp_path / "a.txt").read_bytes() == b"hello"
    assert [r.method for r in seen] == ["POST", "POST", "POST", "GET"]
    assert sleeps == [10.0, 10.0]  # Retry-After, not a backoff


def test_a_download_waits_out_scan_pending_on_the_grant(flavour: str, tmp_path: Path) -> None:
    handler, seen = _pending_then_served(pending_posts=0, pending_gets=1)
    client, sleeps = make_either(flavour, handler)
    assert client.download(LINK, tmp_path / "a.txt").size == 5
    assert [r.method for r in seen] == ["POST", "GET", "GET"] and sleeps == [10.0]


def test_a_download_still_pending_after_the_budget_raises_scan_pending_error(flavour: str, tmp_path: Path) -> None:
    handler, seen = _pending_then_served(pending_posts=99)
    client, sleeps = make_either(flavour, handler, max_retries=1)
    with pytest.raises(fileshare.ScanPendingError) as caught:
        client.download(LINK, tmp_path / "a.txt")
    assert (caught.value.status, caught.value.code, caught.value.retry_after) == (409, "scan_pending", 10)
    assert [r.method for r in seen] == ["POST", "POST"] and sleeps == [10.0]
    assert not (tmp_path / "a.txt").exists()


def test_a_scan_pending_retry_after_over_60s_raises_at_once(flavour: str, tmp_path: Path) -> None:
    handler, seen = sequence(error(409, "scan_pending", {"retry-after": "120"}))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.ScanPendingError) as caught:
        client.download(LINK, tmp_path / "a.txt")
    assert caught.value.retry_after == 120 and len(seen) == 1 and sleeps == []


def test_a_download_of_a_file_not_scannable_is_not_retried(flavour: str, tmp_path: Path) -> None:
    handler, seen = sequence(error(403, "file_not_scannable"))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.LimitExceededError) as caught:
        client.download(LINK, tmp_path / "a.txt")
    assert caught.value.code == "file_not_scannable" and len(seen) == 1 and sleeps == []


def test_an_infected_files_link_is_not_found(flavour: str, tmp_path: Path) -> None:
    handler, seen = sequence(error(404, "not_found"))
    client, sleeps = make_either(flavour, handler)
    with pytest.raises(fileshare.NotFoundError):
        client.download(LINK, tmp_path / "a.txt")
    assert len(seen) == 1 and sleeps == []
