"""``files.delete_many()`` against the real server, with the sync Client and the AsyncClient
(``flavour``): deleted and not found in the order given, another account's file, the idempotency
key's replay, the scope, and ids refused before any request."""

from __future__ import annotations

from typing import Any

import pytest

import fileshare


def test_deletes_and_names_the_ids_that_are_none_of_the_accounts(make_client: Any, other_key: str) -> None:
    client = make_client("pro")
    other = make_client(None, api_key=other_key)
    theirs = other.files.upload(b"theirs", filename="theirs.txt").file_id
    a, b = (client.files.upload(name.encode(), filename=name).file_id for name in ("a.txt", "b.txt"))
    result = client.files.delete_many([b, 999_999_999, a, theirs])
    assert result == fileshare.BulkDeleteResult(deleted=[b, a], not_found=[999_999_999, theirs])
    with pytest.raises(fileshare.NotFoundError):
        client.files.get(a)
    assert other.files.get(theirs).file_id == theirs


def test_the_same_idempotency_key_replays_the_first_answer(make_client: Any) -> None:
    client = make_client("pro")
    a, b = (client.files.upload(name.encode(), filename=name).file_id for name in ("c.txt", "d.txt"))
    key = f"delete-many-py-{a}"
    first = client.files.delete_many([a, str(b)], idempotency_key=key)
    assert first.deleted == [a, b] and first.not_found == []
    assert client.files.delete_many([a, b], idempotency_key=key) == first


def test_needs_files_delete(make_client: Any) -> None:
    file_id = make_client("pro").files.upload(b"kept", filename="kept.txt").file_id
    with pytest.raises(fileshare.PermissionDeniedError) as raised:
        make_client("read_only").files.delete_many([file_id])
    assert raised.value.code == "insufficient_scope"
    assert make_client("pro").files.get(file_id).file_id == file_id


def test_refuses_bad_ids_before_any_request(make_client: Any) -> None:
    client = make_client("pro")
    for ids in ([], [0], ["abc"], list(range(1, 102)), "12"):
        with pytest.raises(fileshare.ConfigurationError):
            client.files.delete_many(ids)
