"""``files.list()`` and ``files.iterate()`` with ``type`` and ``state`` against the real server, with
the sync Client and the AsyncClient (``flavour``), on an account of their own holding one file of
each kind: the media types (top-level, exact, any case, several as any of), each state (an expiry; a
used-up link, and a revoked one that does not count; a guest's upload through an upload request),
the filters with q and a sort, ``iterate`` sending them on every request, and the server's 400s."""

from __future__ import annotations

import typing
from typing import Any, Iterator
from urllib.parse import parse_qs

import pytest

import fileshare
from helpers import guest_upload, new_account, recording, token_of

STATES: tuple[fileshare.FileState, ...] = typing.get_args(fileshare.FileState)


@pytest.fixture(scope="module")
def filters_key(server: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The key of an account with photo.png; scan.jpg (an expiry); report.pdf (its link used up);
    notes.txt (its link revoked); guest.csv (a guest's, through an upload request): in that order."""
    _, key = new_account(server, "filters-py")
    folder = tmp_path_factory.mktemp("filters")
    with fileshare.Client(base_url=server["base_url"], api_key=key) as client:
        client.files.upload(b"filter me", filename="photo.png")
        client.files.upload(b"filter me", filename="scan.jpg", expires_in=86400)
        report = client.files.upload(b"filter me", filename="report.pdf")
        client.download(client.links.create(report.file_id, max_downloads=1), folder / "report.pdf")
        notes = client.files.upload(b"filter me", filename="notes.txt")
        client.links.delete(client.links.create(notes.file_id, max_downloads=1).link_id)
        request = client.upload_requests.create(label="filters", expires_in=86400)
        assert guest_upload(server, token_of(request), b"filter me", "guest.csv").status_code == 201
    yield key


def names(client: Any, **query: Any) -> list[str]:
    return [file.filename for file in client.files.list(**query).files]


def test_type_top_level_exact_any_case_and_several_as_any_of(make_client: Any, filters_key: str) -> None:
    client = make_client(None, api_key=filters_key)
    assert names(client, type="image") == ["scan.jpg", "photo.png"]
    assert names(client, type="IMAGE/PNG") == ["photo.png"]
    assert names(client, type=["application/pdf", "text"]) == ["guest.csv", "notes.txt", "report.pdf"]
    assert names(client, type=("text/csv", "text/csv")) == ["guest.csv"]  # duplicates harmless
    assert names(client, type="video") == []


def test_each_state_and_several_as_any_of(make_client: Any, filters_key: str) -> None:
    client = make_client(None, api_key=filters_key)
    assert STATES == ("expiring", "expired_links", "from_upload_request")
    assert names(client, state="expiring") == ["scan.jpg"]
    assert names(client, state="expired_links") == ["report.pdf"]  # not notes.txt: a revoked link does not count
    assert names(client, state="from_upload_request") == ["guest.csv"]
    assert names(client, state=["expiring", "from_upload_request"]) == ["guest.csv", "scan.jpg"]
    assert client.files.list(state=list(STATES)).pagination.total == 3


def test_filters_with_each_other_q_a_sort_a_page_and_before_id(make_client: Any, filters_key: str) -> None:
    client = make_client(None, api_key=filters_key)
    assert names(client, type="text", state="from_upload_request") == ["guest.csv"]
    assert names(client, type="image", state="expired_links") == []
    assert names(client, type=["image", "text"], q="O", sort="filename", order="asc") == ["notes.txt", "photo.png"]
    second = client.files.list(type=["image", "text"], sort="filename", limit=2, page=2)
    assert [f.filename for f in second.files] == ["notes.txt", "guest.csv"]
    assert (second.pagination.page, second.pagination.total, second.pagination.pages) == (2, 4, 2)
    oldest = client.files.list(order="asc").files[0]
    assert names(client, order="asc", before_id=oldest.file_id, type="image", state="expiring") == ["scan.jpg"]


@pytest.mark.parametrize(("sort", "paging"), [("upload_date", "before_id"), ("filename", "page")])
def test_iterate_gives_the_files_of_one_page_with_the_filters_on_every_request(
    make_client: Any, filters_key: str, flavour: str, sort: fileshare.FileSort, paging: str
) -> None:
    transport = recording(flavour)
    client = make_client(None, api_key=filters_key, transport=transport)
    filters: dict[str, Any] = {"type": ["text", "application/pdf"], "state": ["expired_links", "from_upload_request"], "sort": sort}
    whole = [file.file_id for file in client.files.list(**filters).files]
    assert len(whole) == 2
    transport.exchanges.clear()
    assert [file.file_id for file in client.files.iterate(limit=1, **filters)] == whole
    queries = [parse_qs(exchange.query) for exchange in transport.exchanges]
    assert len(queries) >= 2 and all(exchange.status == 200 for exchange in transport.exchanges)
    assert all((q["type"], q["state"]) == (filters["type"], filters["state"]) for q in queries)
    assert all(paging in q for q in queries[1:])


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"state": ["expiring", "expired"]}, 'state must be one of expiring, expired_links, from_upload_request, got "expired".'),
        ({"type": "image/*"}, 'type must be a media type (image) or type/subtype (application/pdf), got "image/*".'),
    ],
)
def test_the_server_refuses_an_unknown_state_or_type(make_client: Any, filters_key: str, query: dict[str, Any], message: str) -> None:
    with pytest.raises(fileshare.BadRequestError) as raised:
        make_client(None, api_key=filters_key).files.list(**query)
    assert (raised.value.status, raised.value.code) == (400, "invalid_parameter")
    assert message in str(raised.value)
