"""Issue 35 (virus scanning) against the real servers, with the sync Client and the AsyncClient
(``flavour``): on the launcher's normal server (no clamd) every file's ``scan`` is None; on its
``scanning`` server (FILESHARE_SCAN=required, a clamd of its own that knows the EICAR test string)
an EICAR upload (multipart and resumable) ends ``infected`` (its link 404, gone from the list, the
stats and the quota, ``get()`` still answers, the audit log's ``scan.infected``), a clean upload
ends ``clean`` and downloads, a file larger than the scanner takes is refused (403
``file_not_scannable``), and the records match the OpenAPI document's FileScan."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import fileshare
from helpers import random_bytes

from conftest import Factory

SCAN_MAX_BYTES = 26214400  # FILESHARE_SCAN_MAX_BYTES's default (clamd's StreamMaxLength 25M)


@pytest.fixture(scope="module")
def scanning(server: dict[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] | None = server.get("scanning")
    if info is None:
        pytest.skip("the launcher started no scanning server (clamd, Debian's clamav-daemon, is missing)")
    return info


def scanning_client(make_client: Factory, scanning: dict[str, Any], **options: Any) -> Any:
    return make_client(None, base_url=scanning["base_url"], api_key=scanning["keys"]["pro"], **options)


def wait_for_verdict(client: Any, file_id: int, timeout: float = 30.0) -> fileshare.FileRecord:
    """``files.get()`` until the scan is no longer pending."""
    deadline = time.monotonic() + timeout
    while True:
        record: fileshare.FileRecord = client.files.get(file_id)
        assert record.scan is not None, "the scanning server sent no scan"
        if record.scan.status != fileshare.FileScan.PENDING:
            return record
        assert time.monotonic() < deadline, f"file {file_id} still pending after {timeout} s"
        time.sleep(0.1)


def listed_ids(client: Any) -> set[int]:
    return {f.file_id for f in client.files.iterate(limit=100)}


# -- the normal server: no scanning -------------------------------------------------------------


def test_without_scanning_every_record_has_scan_none(make_client: Factory, tmp_path: Path) -> None:
    client = make_client("pro")
    uploaded = client.files.upload(b"not scanned", filename="plain.txt")
    assert uploaded.scan is None and uploaded.to_dict()["scan"] is None and "scan" not in uploaded.extra
    assert client.files.get(uploaded.file_id).scan is None
    page = client.files.list(limit=5)
    assert page.files and all(f.scan is None for f in page.files)
    resumable = client.files.upload(b"not scanned either", filename="plain2.txt", resumable=True)
    assert resumable.scan is None
    client.download(uploaded, tmp_path / "plain.txt")  # served at once
    assert (tmp_path / "plain.txt").read_bytes() == b"not scanned"
    client.files.delete(uploaded.file_id)
    client.files.delete(resumable.file_id)


# -- the scanning server -------------------------------------------------------------------------


@pytest.mark.parametrize("resumable", [False, True], ids=["multipart", "resumable"])
def test_an_eicar_upload_ends_infected_and_leaves_list_links_and_stats(
    make_client: Factory, scanning: dict[str, Any], tmp_path: Path, resumable: bool
) -> None:
    client = scanning_client(make_client, scanning)
    before = client.stats().stats
    uploaded = client.files.upload(scanning["eicar"].encode(), filename="eicar.com", resumable=resumable)
    assert uploaded.scan is not None and uploaded.scan.status in ("pending", "infected")
    if uploaded.scan.status == "pending":
        assert uploaded.scan.signature is None and uploaded.scan.scanned_at is None

    record = wait_for_verdict(client, uploaded.file_id)
    assert record.scan is not None
    assert record.scan.status == fileshare.FileScan.INFECTED == "infected"
    assert record.scan.signature == scanning["signature"]
    assert record.scan.scanned is not None and abs(record.scan.scanned.timestamp() - time.time()) < 300
    assert record.file_id == uploaded.file_id and record.filename == "eicar.com"

    # Its links answer 404 (the SDK's download too, without retries), the list and stats forget it.
    assert httpx.get(uploaded.public_link).status_code == 404
    assert httpx.post(uploaded.public_link).status_code == 404
    with pytest.raises(fileshare.NotFoundError):
        client.download(uploaded, tmp_path / "eicar.com")
    assert not (tmp_path / "eicar.com").exists()
    assert uploaded.file_id not in listed_ids(client)
    after = client.stats().stats
    assert (after.total_files, after.total_size) == (before.total_files, before.total_size)

    # get() still answers for its owner, until the record is deleted.
    again = client.files.get(uploaded.file_id)
    assert again.scan == record.scan
    client.files.delete(uploaded.file_id)
    with pytest.raises(fileshare.NotFoundError):
        client.files.get(uploaded.file_id)


def test_the_audit_log_has_scan_infected(make_client: Factory, scanning: dict[str, Any]) -> None:
    client = scanning_client(make_client, scanning)
    uploaded = client.files.upload(scanning["eicar"].encode(), filename="audit-eicar.txt")
    wait_for_verdict(client, uploaded.file_id)
    deadline = time.monotonic() + 10
    while True:
        events = [e for e in client.audit_events.list(limit=20, action="scan.infected").events if e.target and e.target.id == uploaded.file_id]
        if events or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    [event] = events
    assert event.action == "scan.infected"
    assert (event.actor.type, event.actor.id) == ("system", None)
    assert event.target is not None and event.target.type == "file"
    assert event.details["filename"] == "audit-eicar.txt"
    assert event.details["size"] == len(scanning["eicar"])
    assert event.details["signature"] == scanning["signature"]
    family = client.audit_events.list(limit=20, action="scan.*").events
    assert any(e.event_id == event.event_id for e in family)
    client.files.delete(uploaded.file_id)


def test_a_clean_upload_ends_clean_and_downloads(make_client: Factory, scanning: dict[str, Any], tmp_path: Path) -> None:
    client = scanning_client(make_client, scanning)
    data = random_bytes(64 * 1024, 35)
    uploaded = client.files.upload(data, filename="clean.bin")
    assert uploaded.scan is not None and uploaded.scan.status in ("pending", "clean")
    record = wait_for_verdict(client, uploaded.file_id)
    assert record.scan is not None and record.scan.status == fileshare.FileScan.CLEAN
    assert record.scan.signature is None and record.scan.scanned is not None
    assert uploaded.file_id in listed_ids(client)
    listed = next(f for f in client.files.iterate(limit=100) if f.file_id == uploaded.file_id)
    assert listed.scan == record.scan
    result = client.download(record, tmp_path / "clean.bin")
    assert result.size == len(data) and (tmp_path / "clean.bin").read_bytes() == data
    client.files.delete(uploaded.file_id)


def test_a_download_right_after_upload_waits_for_the_scan(make_client: Factory, scanning: dict[str, Any], tmp_path: Path) -> None:
    """The link may answer 409 scan_pending (Retry-After 10) for a moment: download() waits it out
    within its budget. Scans take milliseconds, so mostly the first attempt is served."""
    client = scanning_client(make_client, scanning)
    data = random_bytes(4096, 36)
    uploaded = client.files.upload(data, filename="fresh.bin")
    result = client.download(uploaded, tmp_path / "fresh.bin")
    assert result.size == len(data) and (tmp_path / "fresh.bin").read_bytes() == data
    client.files.delete(uploaded.file_id)


def test_a_file_larger_than_the_scanner_takes_is_refused(make_client: Factory, scanning: dict[str, Any], tmp_path: Path) -> None:
    client = scanning_client(make_client, scanning, max_retries=0)
    limits = client.stats().limits
    if limits.max_file_size <= SCAN_MAX_BYTES:
        pytest.skip("the plan's own size limit is below the scanner's")
    big = tmp_path / "big.bin"
    with open(big, "wb") as sink:
        sink.truncate(SCAN_MAX_BYTES + 1)  # sparse: the resumable creation is refused before any byte
    before = listed_ids(client)
    with pytest.raises(fileshare.LimitExceededError) as caught:
        client.files.upload(big, resumable=True)
    assert (caught.value.status, caught.value.code) == (403, "file_not_scannable")
    assert listed_ids(client) == before
    os.remove(big)


def test_the_file_scan_record_has_the_fields_of_the_openapi_schema(scanning: dict[str, Any]) -> None:
    document = httpx.get(f"{scanning['base_url']}/openapi.json").json()
    scan = document["components"]["schemas"]["File"]["properties"]["scan"]
    while "$ref" in scan:
        scan = document["components"]["schemas"][scan["$ref"].rsplit("/", 1)[1]]
    [branch] = [b for b in scan.get("anyOf", scan.get("oneOf", [])) if b.get("type") != "null"]
    while "$ref" in branch:
        branch = document["components"]["schemas"][branch["$ref"].rsplit("/", 1)[1]]
    fields = {f.name for f in dataclasses.fields(fileshare.FileScan) if f.name != "extra"}
    assert branch.get("title", "FileScan") == "FileScan"
    assert fields == set(branch["properties"])
    no_default = {f.name for f in dataclasses.fields(fileshare.FileScan) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert no_default <= set(branch.get("required", []))
    statuses = branch["properties"]["status"]
    named = {value for b in statuses.get("anyOf", [statuses]) for value in (b["enum"] if "enum" in b else [b["const"]])}
    constants = {fileshare.FileScan.PENDING, fileshare.FileScan.CLEAN, fileshare.FileScan.INFECTED, fileshare.FileScan.ERROR, fileshare.FileScan.SKIPPED}
    assert named == constants
    codes = set(document["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]["enum"])
    assert {"scan_pending", "file_not_scannable"} <= codes
