"""``files.download_archive()`` against the real server, with the sync Client and the AsyncClient
(``flavour``): names, order and bytes read back with ``zipfile``, duplicates, a file object
destination, another account's id, the scope, and a connection cut mid-archive."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

import fileshare
from helpers import CuttingProxy, random_bytes, through_proxy, without_waits


def entries(archive: Path | io.BytesIO) -> list[tuple[str, int, str, int]]:
    """(name, size, sha256, method) of every entry; zipfile checks each CRC-32 as it reads."""
    with zipfile.ZipFile(archive) as z:
        return [(i.filename, i.file_size, hashlib.sha256(z.read(i)).hexdigest(), i.compress_type) for i in z.infolist()]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def uploaded(server: dict[str, Any]) -> list[tuple[fileshare.FileRecord, bytes]]:
    made = []
    with fileshare.Client(base_url=server["base_url"], api_key=server["keys"]["pro"]) as client:
        for name, data in [
            ("data.bin", random_bytes(180_000, 3)),
            ("same.txt", b"one"),
            ("SAME.txt", b"two"),
            ("Ünïcödé – empty.txt", b""),
        ]:
            made.append((client.files.upload(data, filename=name), data))
    return made


def test_a_zip_to_a_path_names_order_bytes_exact(make_client: Any, uploaded: Any, tmp_path: Path) -> None:
    client = make_client("pro")
    progress: list[tuple[int, int | None]] = []
    target = tmp_path / "all.zip"
    result = client.files.download_archive(
        [f.file_id for f, _ in uploaded], target, on_progress=lambda done, total: progress.append((done, total))
    )
    assert isinstance(result, fileshare.ArchiveResult)
    assert result.filename is not None and re.fullmatch(r"files-\d{8}-\d{6}\.zip", result.filename)
    assert result.size == target.stat().st_size and progress[-1] == (result.size, result.size)
    data = uploaded[0][1]
    assert entries(target) == [
        ("data.bin", len(data), sha(data), zipfile.ZIP_STORED),
        ("same.txt", 3, sha(b"one"), zipfile.ZIP_STORED),
        ("SAME (2).txt", 3, sha(b"two"), zipfile.ZIP_STORED),
        ("Ünïcödé – empty.txt", 0, sha(b""), zipfile.ZIP_STORED),
    ]


def test_a_file_object_and_ids_as_strings(make_client: Any, uploaded: Any) -> None:
    sink = io.BytesIO()
    result = make_client("pro").files.download_archive([str(uploaded[1][0].file_id)], sink)
    assert result.size == len(sink.getvalue())
    sink.seek(0)
    assert [e[0] for e in entries(sink)] == ["same.txt"]


def test_another_accounts_id_is_not_found_before_any_byte(make_client: Any, uploaded: Any, other_key: str, tmp_path: Path) -> None:
    other = make_client(None, api_key=other_key)
    theirs = other.files.upload(b"theirs", filename="theirs.txt")
    target = tmp_path / "refused.zip"
    with pytest.raises(fileshare.NotFoundError) as raised:
        make_client("pro").files.download_archive([uploaded[0][0].file_id, theirs.file_id], target)
    assert str(theirs.file_id) in str(raised.value)
    assert not target.exists()


def test_needs_files_read_and_links_write(make_client: Any, uploaded: Any, tmp_path: Path) -> None:
    with pytest.raises(fileshare.PermissionDeniedError) as raised:
        make_client("auditor").files.download_archive([uploaded[0][0].file_id], tmp_path / "scope.zip")
    assert raised.value.code == "insufficient_scope" and raised.value.required_scope == "files:read"
    # files:read (with links:read and stats:read) reads metadata only: no file's bytes for a read-only key.
    with pytest.raises(fileshare.InsufficientScopeError) as refused:
        make_client("read_only").files.download_archive([uploaded[1][0].file_id], tmp_path / "read-only.zip")
    assert refused.value.required_scope == "links:write"
    assert not (tmp_path / "read-only.zip").exists()


def test_refuses_bad_ids_before_any_request(make_client: Any, tmp_path: Path) -> None:
    client = make_client("pro")
    for ids in ([], [0], ["abc"], list(range(1, 1002)), "12"):
        with pytest.raises(fileshare.ConfigurationError):
            client.files.download_archive(ids, tmp_path / "x.zip")


def test_a_cut_mid_archive_starts_again_and_a_final_one_removes_the_file(
    make_client: Any, server: dict[str, Any], proxy: CuttingProxy, flavour: str, uploaded: Any, tmp_path: Path
) -> None:
    file, data = uploaded[0]
    client = without_waits(make_client("pro", transport=through_proxy(flavour, server, proxy)))
    cuts = proxy.cuts
    proxy.cut_downstream_after(100_000)
    client.files.download_archive([file.file_id], tmp_path / "cut.zip")
    assert proxy.cuts == cuts + 1
    assert entries(tmp_path / "cut.zip") == [("data.bin", len(data), sha(data), zipfile.ZIP_STORED)]

    once = without_waits(make_client("pro", transport=through_proxy(flavour, server, proxy), max_retries=0))
    proxy.cut_downstream_after(100_000)
    with pytest.raises(fileshare.APIConnectionError):
        once.files.download_archive([file.file_id], tmp_path / "cut-for-good.zip")
    assert not (tmp_path / "cut-for-good.zip").exists()
