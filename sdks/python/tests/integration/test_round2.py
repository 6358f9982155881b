"""Issue 30 against the real server: a resumable upload continued by another process after the first
was killed midway; RateLimit-Remaining of a successful call; the records against the OpenAPI
document; per-call options and the logger on real requests."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import subprocess
import sys
import time
import typing
from pathlib import Path
from typing import Any

import httpx
import pytest

import fileshare
from fileshare._errors import LIMIT_CODES
from helpers import random_bytes

from conftest import Factory

ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "upload_child.py"


def child(server: dict[str, Any], *args: str, **popen: Any) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "FILESHARE_BASE_URL": server["base_url"],
        "FILESHARE_API_KEY": server["keys"]["pro"],
    }
    return subprocess.Popen([sys.executable, str(CHILD), *args], env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def test_a_killed_process_upload_is_finished_by_another_process(server: dict[str, Any], tmp_path: Path) -> None:
    data = random_bytes(6 * 1024 * 1024 + 123, seed=30)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    url_file = tmp_path / "upload-url"

    first = child(server, "start", str(path), str(url_file))
    try:
        assert first.stdout is not None
        line = first.stdout.readline()
        assert line.startswith("midway"), line + (first.stderr.read() if first.stderr else "")
    finally:
        first.kill()  # SIGKILL: no cleanup, no DELETE, the chunk's request cut off
        first.wait(timeout=10)
    url = url_file.read_text()
    assert "/uploads/" in url

    head = httpx.head(url, headers={"tus-resumable": "1.0.0", "authorization": f"Bearer {server['keys']['pro']}"})
    held = int(head.headers["upload-offset"])
    assert 0 < held < len(data) and int(head.headers["upload-length"]) == len(data)

    second = child(server, "continue", str(path), url)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["file"]["sha256"] == hashlib.sha256(data).hexdigest() and result["file"]["size"] == len(data)
    assert result["first_offset"] >= held - 1024 * 1024 > 0  # continued, not started over

    with fileshare.Client(server["base_url"], server["keys"]["pro"]) as client:
        target = tmp_path / "back.bin"
        client.download(client.files.get(result["file"]["file_id"]), target)
        assert target.read_bytes() == data


def test_rate_limit_remaining_of_a_successful_call_is_readable(make_client: Factory) -> None:
    client = make_client("pro")
    raw = client.with_raw_response.stats()
    assert raw.status_code == 200 and raw.request_id
    assert raw.rate_limit.remaining is not None and raw.headers["ratelimit-remaining"] == str(raw.rate_limit.remaining)
    assert raw.parse().plan == "pro"
    again = client.with_raw_response.files.list(limit=1)
    assert again.rate_limit.remaining is not None and again.rate_limit.remaining < raw.rate_limit.remaining + 1000


def test_raw_responses_of_an_upload_a_download_and_a_link(make_client: Factory, tmp_path: Path) -> None:
    client = make_client("pro")
    uploaded = client.with_raw_response.files.upload(b"raw bytes", filename="raw.txt")
    assert uploaded.status_code == 201 and uploaded.rate_limit.remaining is not None
    file = uploaded.parse()
    link = client.with_raw_response.links.create(file.file_id, max_downloads=2)
    assert link.status_code == 201 and link.parse().max_downloads == 2 and link.request_id
    fetched = client.with_raw_response.download(link.parse(), tmp_path / "raw.txt")
    assert fetched.status_code == 200 and fetched.headers["etag"] == f'"{file.sha256}"'
    assert [r.status_code for r in fetched.http_responses] == [303, 200]  # the link's grant, then the bytes
    assert fetched.parse().size == 9 and (tmp_path / "raw.txt").read_bytes() == b"raw bytes"
    client.files.delete(file.file_id)


def test_error_headers_body_and_request_id_from_the_server(make_client: Factory) -> None:
    client = make_client("pro")
    with pytest.raises(fileshare.NotFoundError) as caught:
        client.files.get(987654321, max_retries=0, extra_headers={"x-sdk-test": "1"})
    error = caught.value
    assert error.headers is not None and error.headers["x-request-id"] == error.request_id
    assert isinstance(error.body, dict) and error.body["error"]["code"] == error.code == "not_found"
    assert str(error).endswith(f"(request id {error.request_id})")


def test_a_short_timeout_raises_api_timeout_error(server: dict[str, Any]) -> None:
    import socket

    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    try:
        port = silent.getsockname()[1]
        with fileshare.Client(f"http://127.0.0.1:{port}/api/v1", "fsk_x", max_retries=0) as client:
            started = time.monotonic()
            with pytest.raises(fileshare.APITimeoutError):
                client.stats(timeout=0.3)
            assert time.monotonic() - started < 5
    finally:
        silent.close()


def test_the_logger_on_real_requests_never_shows_the_key(make_client: Factory, server: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    client = make_client("pro")
    with caplog.at_level(logging.DEBUG, logger="fileshare"):
        file = client.files.upload(b"logged", filename="log.txt")
        client.files.delete(file.file_id)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "answer: 201 POST" in text and "request id" in text
    assert server["keys"]["pro"] not in text


# -- the OpenAPI document ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def openapi(server: dict[str, Any]) -> dict[str, Any]:
    response = httpx.get(f"{server['base_url']}/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


@pytest.mark.parametrize(
    ("schema", "record"),
    [
        ("File", fileshare.FileRecord),
        ("Pagination", fileshare.Pagination),
        ("Stats", fileshare.Stats),
        ("Limits", fileshare.Limits),
        ("Link", fileshare.Link),
    ],
)
def test_the_records_have_the_fields_of_the_openapi_schemas(openapi: dict[str, Any], schema: str, record: type[Any]) -> None:
    properties = openapi["components"]["schemas"][schema]["properties"]
    fields = {f.name for f in dataclasses.fields(record) if f.name != "extra"}
    assert fields == set(properties), f"{record.__name__} vs components.schemas.{schema}"
    required = set(openapi["components"]["schemas"][schema].get("required", []))
    without_default = {f.name for f in dataclasses.fields(record) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert without_default <= required


def test_list_files_takes_the_sorts_orders_and_states_of_the_literal_types(openapi: dict[str, Any]) -> None:
    query = [p for p in openapi["paths"]["/api/v1/files"]["get"].get("parameters", []) if p["in"] == "query"]
    parameters = {p["name"]: p.get("schema", {}) for p in query}
    # Every parameter the SDK sends is there (the server may take more: the SDK does not send those).
    assert {"before_id", "limit", "order", "page", "q", "sort", "state", "type"} <= set(parameters)
    # type and state are lists, sent as the parameter repeated (OpenAPI's default for a query array: form, exploded).
    for p in query:
        if p["name"] in ("type", "state"):
            assert (p["schema"]["type"], p.get("style", "form"), p.get("explode", True)) == ("array", "form", True), p["name"]

    def values(schema: dict[str, Any]) -> list[str]:  # an enum, or a union of constants
        if "enum" in schema:
            return list(schema["enum"])
        return [option.get("const", (option.get("enum") or [None])[0]) for option in schema.get("anyOf", schema.get("oneOf", []))]

    assert tuple(values(parameters["sort"])) == typing.get_args(fileshare.FileSort)
    assert tuple(values(parameters["order"])) == typing.get_args(fileshare.SortOrder)
    assert tuple(values(parameters["state"]["items"])) == typing.get_args(fileshare.FileState)


def _answer_schema(openapi: dict[str, Any], path: str) -> dict[str, Any]:
    schema: dict[str, Any] = openapi["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    return schema


def _key_and_audit_schemas(openapi: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The schemas of GET /key and GET /audit-events (CurrentKey, AuditEvent), inline in the
    operations or named in components.schemas (``$ref``)."""
    key = _resolve(openapi, _answer_schema(openapi, "/api/v1/key"))["properties"]
    audit = _resolve(openapi, _answer_schema(openapi, "/api/v1/audit-events"))["properties"]
    current = _resolve(openapi, key["key"])
    event = _resolve(openapi, _resolve(openapi, audit["events"])["items"])
    return {
        "CurrentKey": {**current, "properties": {**current["properties"], "plan": key["plan"]}, "required": [*current["required"], "plan"]},
        "AuditEvent": event,
        "AuditActor": _resolve(openapi, event["properties"]["actor"]),
        "AuditTarget": _resolve(openapi, event["properties"]["target"]),
        "AuditPagination": _resolve(openapi, audit["pagination"]),
    }


@pytest.mark.parametrize(
    ("schema", "record"),
    [
        ("CurrentKey", fileshare.CurrentKey),
        ("AuditEvent", fileshare.AuditEvent),
        ("AuditActor", fileshare.AuditActor),
        ("AuditTarget", fileshare.AuditTarget),
        ("AuditPagination", fileshare.AuditPagination),
    ],
)
def test_the_key_and_audit_records_have_the_fields_of_the_operations(openapi: dict[str, Any], schema: str, record: type[Any]) -> None:
    found = _key_and_audit_schemas(openapi)[schema]
    fields = {f.name for f in dataclasses.fields(record) if f.name != "extra"}
    assert fields == set(found["properties"]), f"{record.__name__} vs the operation's {schema}"
    without_default = {f.name for f in dataclasses.fields(record) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert without_default <= set(found.get("required", []))
    if "title" in found:
        assert found["title"] == schema


def test_the_error_codes_the_sdk_names_are_the_documents(openapi: dict[str, Any]) -> None:
    codes = set(openapi["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]["enum"])
    named = set(LIMIT_CODES) | {
        "idempotency_in_progress",
        "idempotency_key_reused",
        "plan_not_supported",
        "insufficient_scope",
        "ip_not_allowed",
        "not_found",
        "invalid_password",
        "scan_pending",  # ScanPendingError
    }
    # sdks.md names webhook_limit_exceeded before the server has webhooks; once it has them, the
    # document must list it (and webhook_url_not_allowed, which the SDK's README names)
    if _has_webhooks(openapi):
        named |= {"webhook_url_not_allowed"}
        ahead: set[str] = set()
    else:
        ahead = {"webhook_limit_exceeded"}
    if not _has_upload_requests(openapi):
        ahead |= {"upload_request_full"}
    assert named - codes <= ahead, named - codes
    error = openapi["components"]["schemas"]["Error"]["properties"]["error"]["properties"]
    assert "required_scope" in error  # InsufficientScopeError.required_scope


# -- webhooks (issue 33): checked once the server's document has the /webhooks paths ----------


def _has_webhooks(openapi: dict[str, Any]) -> bool:
    return "/api/v1/webhooks" in openapi["paths"]


def _resolve(openapi: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with its ``$ref`` followed, or the branch of an ``anyOf``/``oneOf`` with null that
    is not null (itself followed)."""
    while "$ref" in schema:
        target: Any = openapi
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = target
    for key in ("anyOf", "oneOf"):
        if key in schema:
            [branch] = [b for b in schema[key] if b.get("type") != "null"]
            return _resolve(openapi, branch)
    return schema


def _answer(openapi: dict[str, Any], path: str, method: str, status: str) -> dict[str, Any]:
    operation = openapi["paths"][path][method]
    return _resolve(openapi, operation["responses"][status]["content"]["application/json"]["schema"])


def _webhook_schemas(openapi: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The webhook, the created webhook (with its secret), a delivery and the deliveries'
    pagination, from the operations of the document."""
    item = next(p for p in openapi["paths"] if p.startswith("/api/v1/webhooks/{") and p.count("/") == 4)
    deliveries = next(p for p in openapi["paths"] if p.startswith("/api/v1/webhooks/{") and p.endswith("/deliveries"))
    listed = _answer(openapi, deliveries, "get", "200")["properties"]
    return {
        "Webhook": _resolve(openapi, _answer(openapi, item, "get", "200")["properties"]["webhook"]),
        "Webhook (created)": _resolve(openapi, _answer(openapi, "/api/v1/webhooks", "post", "201")["properties"]["webhook"]),
        "WebhookDelivery": _resolve(openapi, listed["deliveries"]["items"]),
        "WebhookDeliveryPagination": _resolve(openapi, listed["pagination"]),
    }


def _no_default(record: type[Any]) -> set[str]:
    return {f.name for f in dataclasses.fields(record) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}


@pytest.mark.parametrize(
    ("schema", "record"),
    [
        ("Webhook", fileshare.Webhook),
        ("Webhook (created)", fileshare.Webhook),
        ("WebhookDelivery", fileshare.WebhookDelivery),
        ("WebhookDeliveryPagination", fileshare.WebhookDeliveryPagination),
    ],
)
def test_the_webhook_records_have_the_fields_of_the_operations(openapi: dict[str, Any], schema: str, record: type[Any]) -> None:
    if not _has_webhooks(openapi):
        pytest.skip("the server's OpenAPI document has no /webhooks paths yet")
    found = _webhook_schemas(openapi)[schema]
    fields = {f.name for f in dataclasses.fields(record) if f.name != "extra"}
    properties = set(found["properties"])
    if record is fileshare.Webhook:
        # the secret is only in the answers of create and rotate-secret: the document may describe
        # those with the same schema (secret optional) or with one of their own
        assert "secret" not in found.get("required", []) or schema == "Webhook (created)"
        if schema == "Webhook (created)":
            assert "secret" in properties
        fields.discard("secret")
        properties.discard("secret")
    assert fields == properties, f"{record.__name__} vs the operation's {schema}"
    assert _no_default(record) <= set(found.get("required", []))


# -- upload requests (issue 34): checked once the server's document has the /upload-requests paths


def _has_upload_requests(openapi: dict[str, Any]) -> bool:
    return "/api/v1/upload-requests" in openapi["paths"]


def _upload_request_schemas(openapi: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The upload request (of GET, POST and the list), a page of its files, and the file's source."""
    item = next(p for p in openapi["paths"] if p.startswith("/api/v1/upload-requests/{") and p.count("/") == 4)
    files = next(p for p in openapi["paths"] if p.startswith("/api/v1/upload-requests/{") and p.endswith("/files"))
    page = _answer(openapi, files, "get", "200")["properties"]
    listed = _answer(openapi, "/api/v1/upload-requests", "get", "200")["properties"]["upload_requests"]
    source = openapi["components"]["schemas"]["File"]["properties"]["source"]
    while "$ref" in source:  # the union itself, not one branch as _resolve would give
        source = openapi["components"]["schemas"][source["$ref"].rsplit("/", 1)[1]]
    branches = [_resolve(openapi, b) for b in source.get("oneOf", source.get("anyOf", [source]))]
    return {
        "UploadRequest": _resolve(openapi, _answer(openapi, item, "get", "200")["properties"]["upload_request"]),
        "UploadRequest (created)": _resolve(openapi, _answer(openapi, "/api/v1/upload-requests", "post", "201")["properties"]["upload_request"]),
        "UploadRequest (listed)": _resolve(openapi, _resolve(openapi, listed)["items"]),
        "File (of a request)": _resolve(openapi, _resolve(openapi, page["files"])["items"]),
        "UploadRequestFilePagination": _resolve(openapi, page["pagination"]),
        "FileSource": {
            "properties": {name: {} for branch in branches for name in branch.get("properties", {})},
            "required": sorted(set.intersection(*(set(b.get("required", [])) for b in branches))),
        },
    }


@pytest.mark.parametrize(
    ("schema", "record"),
    [
        ("UploadRequest", fileshare.UploadRequest),
        ("UploadRequest (created)", fileshare.UploadRequest),
        ("UploadRequest (listed)", fileshare.UploadRequest),
        ("File (of a request)", fileshare.FileRecord),
        ("UploadRequestFilePagination", fileshare.UploadRequestFilePagination),
        ("FileSource", fileshare.FileSource),
    ],
)
def test_the_upload_request_records_have_the_fields_of_the_operations(openapi: dict[str, Any], schema: str, record: type[Any]) -> None:
    if not _has_upload_requests(openapi):
        pytest.skip("the server's OpenAPI document has no /upload-requests paths yet")
    found = _upload_request_schemas(openapi)[schema]
    fields = {f.name for f in dataclasses.fields(record) if f.name != "extra"}
    assert fields == set(found["properties"]), f"{record.__name__} vs the operation's {schema}"
    assert _no_default(record) <= set(found.get("required", []))
