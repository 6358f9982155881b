"""Every call against the real server, with the sync Client and the AsyncClient (``flavour``)."""

from __future__ import annotations

import hashlib
import io
from datetime import timezone
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

import fileshare
from helpers import CuttingProxy, random_bytes, through_proxy, without_waits


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_upload_sources_get_list_delete(make_client: Any, tmp_path: Path) -> None:
    client = make_client("pro")
    data = random_bytes(300_000, 1)
    path = tmp_path / "photo.jpg"
    path.write_bytes(data)
    progress: list[tuple[int, int | None]] = []

    from_path = client.files.upload(path, on_progress=lambda sent, total: progress.append((sent, total)))
    assert (from_path.filename, from_path.size, from_path.sha256) == ("photo.jpg", len(data), sha(data))
    assert from_path.content_type == "image/jpeg"
    assert progress[-1] == (len(data), len(data)) and progress[0] == (0, len(data))
    assert from_path.uploaded_at.tzinfo == timezone.utc
    assert from_path.uploaded_at.strftime("%Y-%m-%d %H:%M:%S") == from_path.upload_date

    from_bytes = client.files.upload(b"hello", filename='quo"te.txt')
    assert from_bytes.filename == 'quo"te.txt' and from_bytes.sha256 == sha(b"hello")
    with open(path, "rb") as handle:
        from_file = client.files.upload(handle, content_type="image/jpeg")
    assert from_file.filename == "photo.jpg" and from_file.sha256 == sha(data)
    from_stream = client.files.upload((data[i : i + 70_000] for i in range(0, len(data), 70_000)), filename="gen.bin")
    assert from_stream.size == len(data) and from_stream.sha256 == sha(data)
    empty = client.files.upload(io.BytesIO(b""), filename="empty.txt")
    assert empty.size == 0

    got = client.files.get(from_path.file_id)
    assert got == from_path
    page = client.files.list(page=1, limit=2)
    assert len(page.files) == 2 and page.pagination.limit == 2 and page.pagination.total >= 5
    assert page.files[0].file_id == empty.file_id  # newest first

    client.files.delete(from_bytes.file_id)
    with pytest.raises(fileshare.NotFoundError) as caught:
        client.files.get(from_bytes.file_id)
    assert caught.value.status == 404 and caught.value.code == "not_found" and caught.value.request_id
    with pytest.raises(fileshare.NotFoundError):
        client.files.delete(from_bytes.file_id)


def test_iterate_never_yields_a_file_twice(make_client: Any) -> None:
    client = make_client("pro")
    before = {f.file_id for f in client.files.iterate(limit=100)}
    made = [client.files.upload(bytes([i]), filename=f"it-{i}.bin").file_id for i in range(5)]
    seen: list[int] = []
    for index, file in enumerate(client.files.iterate(limit=2)):
        seen.append(file.file_id)
        if index == 1:
            # Uploads during the iteration shift the pages by offset: the SDK still yields each once.
            made.append(client.files.upload(b"late", filename="late.bin").file_id)
    assert len(seen) == len(set(seen))
    assert set(made[:5]) <= set(seen) and before <= set(seen)


def test_stats(make_client: Any) -> None:
    result = make_client("pro").stats()
    assert result.plan == "pro"
    assert result.stats.total_files >= 0 and result.stats.uploads_today >= 0
    assert result.limits.max_file_size == 5 * 1024**3


def test_error_classes(make_client: Any, server: dict[str, Any]) -> None:
    bad_key = "fsk_" + "A" * 43
    with pytest.raises(fileshare.AuthenticationError) as auth:
        make_client(None, api_key=bad_key).files.list()
    assert auth.value.status == 401 and auth.value.code == "unauthorized"
    assert bad_key not in str(auth.value) and bad_key not in repr(auth.value)
    with pytest.raises(fileshare.PermissionDeniedError) as denied:
        make_client("free").stats()
    assert denied.value.status == 403 and denied.value.code == "plan_not_supported"
    with pytest.raises(fileshare.NotFoundError):
        make_client("pro").files.get(987654321)
    with pytest.raises(fileshare.BadRequestError) as bad:
        make_client("pro").files.list(limit=500)
    assert bad.value.status == 400 and bad.value.code == "invalid_parameter"
    with pytest.raises(fileshare.APIConnectionError):
        make_client(None, base_url="http://127.0.0.1:9/api/v1", api_key=bad_key, max_retries=0).stats()
    with pytest.raises(fileshare.ConfigurationError):
        make_client(None, api_key=None, base_url=server["base_url"])
    with pytest.raises(fileshare.ConfigurationError):
        make_client("pro").files.get("1; DROP")


class _Corrupting(httpx.HTTPTransport):
    """Answers of the multipart upload with another sha256, as a broken server or proxy would."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        return _corrupt(request, response, response.read())


class _AsyncCorrupting(httpx.AsyncHTTPTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        return _corrupt(request, response, await response.aread())


def _corrupt(request: httpx.Request, response: httpx.Response, body: bytes) -> httpx.Response:
    if request.url.path.endswith("/files/upload") and response.status_code == 201:
        import json

        data = json.loads(body)
        data["sha256"] = "0" * 64
        body = json.dumps(data).encode()
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=body)


def test_integrity_error_on_a_corrupted_upload_answer(make_client: Any, flavour: str) -> None:
    transport = _Corrupting() if flavour == "sync" else _AsyncCorrupting()
    client = make_client("pro", transport=transport)
    with pytest.raises(fileshare.IntegrityError) as caught:
        client.files.upload(b"some bytes", filename="x.bin")
    assert caught.value.expected == "0" * 64 and caught.value.actual == sha(b"some bytes")


@pytest.fixture(scope="module")
def stored(server: dict[str, Any]) -> Iterator[tuple[fileshare.FileRecord, bytes]]:
    data = random_bytes(3 * 1024 * 1024 + 17, 11)
    with fileshare.Client(server["base_url"], server["keys"]["pro"]) as client:
        yield client.files.upload(data, filename="resume.bin"), data


def test_download_whole_to_path_and_file_object(make_client: Any, stored: Any, tmp_path: Path) -> None:
    file, data = stored
    client = make_client("pro")
    result = client.download(file, tmp_path / "whole.bin")
    assert result == fileshare.DownloadResult(size=len(data), sha256=sha(data), resumed_from=0)
    assert (tmp_path / "whole.bin").read_bytes() == data
    sink = io.BytesIO()
    client.download(file.public_link, sink)
    assert sink.getvalue() == data


def test_download_resumes_with_range_and_if_range(make_client: Any, server: dict[str, Any], tmp_path: Path) -> None:
    client = make_client("pro")
    data = random_bytes(2_000_000, 21)
    file = client.files.upload(data, filename="partial.bin")
    target = tmp_path / "partial.bin"
    target.write_bytes(data[:700_000])
    progress: list[int] = []
    result = client.download(file, target, on_progress=lambda done, total: progress.append(done))
    assert result == fileshare.DownloadResult(size=len(data), sha256=sha(data), resumed_from=700_000)
    assert target.read_bytes() == data and progress[0] == 700_000
    # The grant POST counted one download; the ranges the grant served counted nothing more.
    assert client.files.get(file.file_id).download_count == 1

    link_only = tmp_path / "link.bin"
    link_only.write_bytes(data[:1_000_000])
    assert client.download(file.public_link, link_only).resumed_from == 1_000_000  # HEAD for the ETag
    fresh = tmp_path / "fresh.bin"
    fresh.write_bytes(b"junk" * 1000)
    assert client.download(file, fresh, resume=False).resumed_from == 0
    assert fresh.read_bytes() == data

    wrong = bytearray(data[:500_000])
    wrong[10] ^= 0xFF
    (tmp_path / "wrong.bin").write_bytes(wrong)
    with pytest.raises(fileshare.IntegrityError) as caught:
        client.download(file, tmp_path / "wrong.bin")
    assert caught.value.expected == sha(data)


def test_download_continues_after_a_dropped_connection(
    make_client: Any, stored: Any, proxy: CuttingProxy, server: dict[str, Any], flavour: str, tmp_path: Path
) -> None:
    file, data = stored
    client = make_client("pro", transport=through_proxy(flavour, server, proxy))
    without_waits(client)
    cuts = proxy.cuts
    proxy.cut_downstream_after(1_500_000)
    result = client.download(file.public_link, tmp_path / "cut.bin")
    assert proxy.cuts == cuts + 1
    assert result.size == len(data) and (tmp_path / "cut.bin").read_bytes() == data


def test_resumable_upload(make_client: Any, tmp_path: Path) -> None:
    client = make_client("pro")
    data = random_bytes(3 * 1024 * 1024 + 5, 31)
    progress: list[int] = []
    file = client.files.upload(
        data, filename="tus.bin", resumable=True, chunk_size=1024 * 1024, on_progress=lambda n, t: progress.append(n)
    )
    assert (file.size, file.sha256, file.filename) == (len(data), sha(data), "tus.bin")
    assert progress[-1] == len(data)
    # A stream of unknown length: a deferred length, declared on the last chunk.
    streamed = client.files.upload(iter([data[:2_000_000], data[2_000_000:]]), filename="s.bin", resumable=True, chunk_size=1024 * 1024)
    assert streamed.sha256 == sha(data)
    # The threshold picks resumable uploads by itself.
    small = make_client("pro", resumable_threshold=1000, chunk_size=4096)
    assert small.files.upload(data[:10_000], filename="auto.bin").sha256 == sha(data[:10_000])


def test_resumable_upload_resumes_after_a_dropped_connection(
    make_client: Any, proxy: CuttingProxy, tmp_path: Path
) -> None:
    MiB = 1024 * 1024
    data = random_bytes(6 * MiB, 41)
    path = tmp_path / "tus-cut.bin"
    path.write_bytes(data)
    client = make_client("pro", base_url=f"{proxy.url}/api/v1", chunk_size=2 * MiB)
    without_waits(client)
    start = proxy.upstream_bytes
    cuts = proxy.cuts
    proxy.cut_upstream_after(3 * MiB)  # inside the second chunk
    progress: list[int] = []
    file = client.files.upload(path, resumable=True, on_progress=lambda n, t: progress.append(n))
    assert proxy.cuts == cuts + 1
    assert (file.size, file.sha256, file.filename) == (len(data), sha(data), "tus-cut.bin")
    sent = proxy.upstream_bytes - start
    assert 6 * MiB + 512 * 1024 < sent < 6 * MiB + 2 * MiB + 256 * 1024  # resumed, not restarted
    assert progress[-1] == len(data)
