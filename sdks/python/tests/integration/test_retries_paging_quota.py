"""Issue 29 against the real server, with the sync Client and the AsyncClient (``flavour``): a retried
upload stores one file (idempotency keys, through the cutting proxy), an explicit key replays its
first answer, iterate() pages by before_id while its files are deleted, and the storage quota.

Each test has accounts of its own (made by the ``fileshare`` CLI), so that the counts it checks
(files, uploads today, bytes) are only its own."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import fileshare
from helpers import CuttingProxy, fileshare_cli, new_account, random_bytes, recording, without_waits


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def account(server: dict[str, Any], make_client: Any, name: str) -> tuple[int, str, Any]:
    """A new pro account: its id, its key, and a client on it (straight to the server)."""
    account_id, key = new_account(server, f"{name}-{uuid.uuid4().hex[:8]}")
    return account_id, key, make_client(None, api_key=key)


def file_ids(client: Any) -> list[int]:
    return [f.file_id for f in client.files.iterate(limit=100)]


# -- a retried upload stores one file ----------------------------------------------------------


@pytest.mark.parametrize("resumable", [False, True], ids=["multipart", "tus"])
def test_an_answer_cut_after_the_upload_was_stored_then_the_sdks_retry_leaves_one_file(
    make_client: Any, server: dict[str, Any], proxy: CuttingProxy, flavour: str, resumable: bool
) -> None:
    _, key, direct = account(server, make_client, f"cut-{flavour}")
    transport = recording(flavour)
    client = without_waits(make_client(None, api_key=key, base_url=f"{proxy.url}/api/v1", transport=transport))
    if resumable:
        assert client.resumable_uploads().available  # asked before the cut: only the creation's answer is cut
    data = random_bytes(200_000, 51)
    cuts = proxy.cuts
    proxy.cut_downstream_after(1)  # the server stored the file (or made the upload); its answer is lost
    file = client.files.upload(data, filename="cut.bin", resumable=resumable, chunk_size=64 * 1024)
    assert proxy.cuts == cuts + 1
    assert (file.size, file.sha256, file.filename) == (len(data), sha(data), "cut.bin")

    creations = [e for e in transport.exchanges if e.method == "POST"]
    assert [(e.status, e.replayed) for e in creations] == [(None, False), (201, True)]
    assert creations[0].idempotency_key == creations[1].idempotency_key and creations[0].idempotency_key
    assert all(e.idempotency_key is None for e in transport.exchanges if e.method != "POST")

    assert file_ids(direct) == [file.file_id]  # exactly one file, the one returned
    stats = direct.stats().stats
    assert (stats.total_files, stats.total_size, stats.uploads_today, stats.storage_reserved) == (1, len(data), 1, 0)


def test_the_same_key_twice_replays_the_first_answer_and_another_request_is_refused(
    make_client: Any, server: dict[str, Any], flavour: str
) -> None:
    _, key, _ = account(server, make_client, f"same-key-{flavour}")
    transport = recording(flavour)
    client = make_client(None, api_key=key, transport=transport)
    data = random_bytes(50_000, 52)
    idempotency_key = f"sdk-python-{uuid.uuid4()}"

    first = client.files.upload(data, filename="a.bin", idempotency_key=idempotency_key)
    again = client.files.upload(data, filename="a.bin", idempotency_key=idempotency_key)
    assert again == first
    assert [e.replayed for e in transport.exchanges if e.method == "POST"] == [False, True]
    with pytest.raises(fileshare.BadRequestError) as reused:
        client.files.upload(data + b"more", filename="b.bin", idempotency_key=idempotency_key)
    assert (reused.value.status, reused.value.code) == (422, "idempotency_key_reused")
    assert file_ids(client) == [first.file_id] and client.stats().stats.uploads_today == 1

    # A resumable upload with a key of its own: the second call finds the upload done, sends nothing.
    tus_key = f"sdk-python-{uuid.uuid4()}"
    resumed = client.files.upload(data, filename="t.bin", resumable=True, chunk_size=16 * 1024, idempotency_key=tus_key)
    patches = sum(e.method == "PATCH" for e in transport.exchanges)
    assert client.files.upload(data, filename="t.bin", resumable=True, idempotency_key=tus_key).file_id == resumed.file_id
    assert sum(e.method == "PATCH" for e in transport.exchanges) == patches
    assert sorted(file_ids(client)) == sorted([first.file_id, resumed.file_id])

    # links.create: the same key gives the same link, not a second one.
    link_key = f"sdk-python-{uuid.uuid4()}"
    link = client.links.create(first.file_id, label="once", idempotency_key=link_key)
    assert client.links.create(first.file_id, label="once", idempotency_key=link_key).link_id == link.link_id
    with pytest.raises(fileshare.BadRequestError) as other_link:
        client.links.create(first.file_id, label="another", idempotency_key=link_key)
    assert other_link.value.code == "idempotency_key_reused"
    assert [x.link_id for x in client.links.list(first.file_id) if not x.default] == [link.link_id]


# -- paging by before_id -----------------------------------------------------------------------


def test_iterate_while_deleting_every_file_it_yields_leaves_none(make_client: Any, server: dict[str, Any], flavour: str) -> None:
    _, _, client = account(server, make_client, f"iterate-{flavour}")
    made = [client.files.upload(bytes([i % 256]), filename=f"f{i}.bin").file_id for i in range(250)]
    first = client.files.list(limit=100)
    assert (first.pagination.page, first.pagination.total, first.pagination.next_before_id) == (1, 250, first.files[-1].file_id)
    second = client.files.list(limit=100, before_id=first.pagination.next_before_id)
    assert second.pagination.page is None and second.files[0].file_id < first.files[-1].file_id
    with pytest.raises(fileshare.BadRequestError) as both:
        client.files.list(page=1, before_id=made[-1])
    assert (both.value.status, both.value.code) == (400, "invalid_parameter")
    with pytest.raises(fileshare.BadRequestError):
        client.files.list(before_id=0)

    deleted: list[int] = []
    for file in client.files.iterate(limit=100):
        client.files.delete(file.file_id)
        deleted.append(file.file_id)
    assert deleted == sorted(made, reverse=True)  # every file, once, newest first
    left = client.files.list()
    assert left.files == [] and left.pagination.total == 0 and left.pagination.next_before_id is None


# -- the storage quota -------------------------------------------------------------------------


def test_stats_carry_the_quota_and_an_upload_over_it_is_a_limit(make_client: Any, server: dict[str, Any], flavour: str) -> None:
    pro = make_client("pro").stats()
    assert pro.limits.max_storage == 100 * 1024**3 and pro.stats.storage_reserved >= 0  # the pro plan's default

    account_id, _, client = account(server, make_client, f"quota-{flavour}")
    fileshare_cli(server, "account", "set-limits", str(account_id), "--max-storage", "100000")
    result = client.stats()
    assert (result.limits.max_storage, result.stats.storage_reserved, result.stats.total_size) == (100_000, 0, 0)

    kept = client.files.upload(random_bytes(60_000, 53), filename="kept.bin")
    for options in ({"resumable": False}, {"resumable": True}):  # refused on the declared length
        with pytest.raises(fileshare.LimitExceededError) as caught:
            client.files.upload(random_bytes(60_000, 54), filename="over.bin", **options)
        assert (caught.value.status, caught.value.code) == (403, "storage_quota_exceeded")
    # A stream of unknown length (a deferred tus length): refused at the first byte past the quota.
    stream = (random_bytes(10_000, 55 + i) for i in range(6))
    with pytest.raises(fileshare.LimitExceededError) as grown:
        client.files.upload(stream, filename="grown.bin", resumable=True, chunk_size=10_000)
    assert grown.value.code == "storage_quota_exceeded"

    after = client.stats()
    assert (after.stats.total_files, after.stats.total_size, after.stats.storage_reserved) == (1, kept.size, 0)
    fileshare_cli(server, "account", "set-limits", str(account_id), "--max-storage", "unlimited")
    assert client.stats().limits.max_storage is None


def test_the_same_key_while_its_first_request_runs_waits_and_gets_the_first_answer(
    server: dict[str, Any], make_client: Any, flavour: str
) -> None:
    """The second call arrives while the first still streams its body: 409 idempotency_in_progress
    with Retry-After: 1, which the SDK waits out and sends again with the key, until the replay."""
    _, key, direct = account(server, make_client, f"in-progress-{flavour}")
    data = random_bytes(30_000, 56)
    idempotency_key = f"sdk-python-{uuid.uuid4()}"
    pieces = [data[i : i + 10_000] for i in range(0, len(data), 10_000)]
    # The first call's body: a piece, then (once the second call is under way) a piece every 0.5 s.
    first_sent, second_sent = threading.Event(), threading.Event()

    def slow() -> Iterator[bytes]:
        for piece in pieces:
            yield piece
            first_sent.set()
            second_sent.wait(10)
            time.sleep(0.5)

    async def slow_async() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece
            first_sent.set()
            await asyncio.sleep(0.7)

    transport = recording(flavour)
    options = {"base_url": server["base_url"], "api_key": key, "max_retries": 5, "transport": transport}
    if flavour == "sync":
        with fileshare.Client(**options) as client, ThreadPoolExecutor(2) as pool:
            first = pool.submit(client.files.upload, slow(), filename="a.bin", size=len(data), idempotency_key=idempotency_key)
            assert first_sent.wait(10)
            time.sleep(0.2)  # the server has the first request's headers: the key is taken
            second_sent.set()
            second = client.files.upload(data, filename="a.bin", idempotency_key=idempotency_key)
            results = [first.result(timeout=30), second]
    else:

        async def both() -> list[fileshare.FileRecord]:
            async with fileshare.AsyncClient(**options) as client:
                first = asyncio.create_task(client.files.upload(slow_async(), filename="a.bin", size=len(data), idempotency_key=idempotency_key))
                while not first_sent.is_set():
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.2)  # the server has the first request's headers: the key is taken
                second = await client.files.upload(data, filename="a.bin", idempotency_key=idempotency_key)
                return [await first, second]

        results = asyncio.run(both())
    assert results[0] == results[1] and results[0].sha256 == sha(data)
    answers = [(e.status, e.replayed) for e in transport.exchanges]
    assert (409, False) in answers and answers.count((201, True)) == 1 and answers.count((201, False)) == 1
    assert file_ids(direct) == [results[0].file_id] and direct.stats().stats.uploads_today == 1
