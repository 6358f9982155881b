"""``files.list()`` and ``files.iterate()`` with ``q``, ``sort`` and ``order`` against the real server,
with the sync Client and the AsyncClient (``flavour``), on an account of their own (so that the
listing holds only these five files): the search (any case), each sort in both directions with its
ties, ``iterate`` across pages with the same query on every request (by before_id in upload order,
by page number otherwise), and the server's 400s for what it refuses."""

from __future__ import annotations

import typing
from typing import Any, Iterator
from urllib.parse import parse_qs

import pytest

import fileshare
from helpers import new_account, recording

# In upload order: name, size, downloads.
FILES = [
    ("Beta-report.txt", 30, 0),
    ("alpha.TXT", 10, 1),
    ("gamma_report.csv", 50, 0),
    ("delta.txt", 20, 2),
    ("REPORT-epsilon.pdf", 40, 0),
]
SORTS: tuple[fileshare.FileSort, ...] = typing.get_args(fileshare.FileSort)
ORDERS: tuple[fileshare.SortOrder, ...] = typing.get_args(fileshare.SortOrder)


@pytest.fixture(scope="module")
def search_key(server: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The key of an account with just FILES, uploaded in that order and downloaded as often as said."""
    _, key = new_account(server, "search-sort-py")
    folder = tmp_path_factory.mktemp("search-sort")
    with fileshare.Client(base_url=server["base_url"], api_key=key) as client:
        for name, size, downloads in FILES:
            file = client.files.upload(b"x" * size, filename=name)
            for n in range(downloads):
                client.download(file, folder / f"{n}-{name}")
    yield key


def names(result: fileshare.FileList) -> list[str]:
    return [file.filename for file in result.files]


def test_q_lists_the_names_containing_it_in_any_case(make_client: Any, search_key: str) -> None:
    client = make_client(None, api_key=search_key)
    found = client.files.list(q="rEpOrT")
    assert names(found) == ["REPORT-epsilon.pdf", "gamma_report.csv", "Beta-report.txt"]
    assert (found.pagination.page, found.pagination.total, found.pagination.pages, found.pagination.next_before_id) == (1, 3, 1, None)
    assert client.files.list(q=".txt").pagination.total == 3
    assert client.files.list(q="nothing like it").files == []
    assert client.files.list(q="").pagination.total == 5  # an empty q filters nothing


def test_each_sort_both_ways_ties_by_file_id(make_client: Any, search_key: str) -> None:
    client = make_client(None, api_key=search_key)
    by_name = ["alpha.TXT", "Beta-report.txt", "delta.txt", "gamma_report.csv", "REPORT-epsilon.pdf"]
    assert names(client.files.list(sort="filename", order="asc")) == by_name
    assert names(client.files.list(sort="filename")) == by_name[::-1]
    by_size = ["gamma_report.csv", "REPORT-epsilon.pdf", "Beta-report.txt", "delta.txt", "alpha.TXT"]
    assert names(client.files.list(sort="size", order="desc")) == by_size
    assert names(client.files.list(sort="size", order="asc")) == by_size[::-1]
    by_downloads = client.files.list(sort="download_count")
    assert names(by_downloads) == ["delta.txt", "alpha.TXT", "REPORT-epsilon.pdf", "gamma_report.csv", "Beta-report.txt"]
    assert [file.download_count for file in by_downloads.files] == [2, 1, 0, 0, 0]
    assert names(client.files.list(sort="upload_date", order="asc")) == [name for name, _, _ in FILES]


def test_q_and_sort_with_a_page_and_with_before_id(make_client: Any, search_key: str) -> None:
    client = make_client(None, api_key=search_key)
    second = client.files.list(q="REPORT", sort="size", order="asc", limit=2, page=2)
    assert names(second) == ["gamma_report.csv"]
    assert (second.pagination.page, second.pagination.total, second.pagination.pages) == (2, 3, 2)
    oldest_first = client.files.list(order="asc").files
    after = client.files.list(order="asc", before_id=oldest_first[1].file_id, q="report")
    assert names(after) == ["gamma_report.csv", "REPORT-epsilon.pdf"] and after.pagination.page is None
    before = client.files.list(before_id=oldest_first[4].file_id, q="report", limit=1)
    assert names(before) == ["gamma_report.csv"] and before.pagination.next_before_id == oldest_first[2].file_id


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("order", ORDERS)
def test_iterate_gives_the_files_of_one_page_in_its_order_with_the_query_on_every_request(
    make_client: Any, search_key: str, flavour: str, sort: fileshare.FileSort, order: fileshare.SortOrder
) -> None:
    transport = recording(flavour)
    client = make_client(None, api_key=search_key, transport=transport)
    whole = [file.file_id for file in client.files.list(q="T", sort=sort, order=order, limit=100).files]
    assert len(whole) == 5
    transport.exchanges.clear()
    assert [file.file_id for file in client.files.iterate(q="T", sort=sort, order=order, limit=2)] == whole
    queries = [parse_qs(exchange.query) for exchange in transport.exchanges]
    assert len(queries) == 3 and all(exchange.status == 200 for exchange in transport.exchanges)
    assert all((q["q"], q["sort"], q["order"]) == (["T"], [sort], [order]) for q in queries)
    paging = ["before_id" if "before_id" in q else "page" if "page" in q else "?" for q in queries[1:]]
    assert paging == (["before_id", "before_id"] if sort == "upload_date" else ["page", "page"])


def test_iterate_oldest_first_deleting_each_file_skips_none(make_client: Any, server: dict[str, Any], flavour: str) -> None:
    _, key = new_account(server, f"search-sort-delete-{flavour}")
    client = make_client(None, api_key=key)
    uploaded = [client.files.upload(bytes([n]), filename=f"x-{n}.bin").file_id for n in range(7)]
    seen = []
    for file in client.files.iterate(order="asc", q="X-", limit=3):
        seen.append(file.file_id)
        client.files.delete(file.file_id)
    assert seen == uploaded


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"sort": "name"}, "sort must be one of upload_date, filename, size, download_count"),
        ({"order": "up"}, "order must be asc or desc"),
        ({"sort": "size", "before_id": 5}, "before_id pages only with sort=upload_date"),
    ],
)
def test_the_server_refuses_an_unknown_sort_or_order_and_before_id_with_another_sort(
    make_client: Any, search_key: str, query: dict[str, Any], message: str
) -> None:
    with pytest.raises(fileshare.BadRequestError) as raised:
        make_client(None, api_key=search_key).files.list(**query)
    assert (raised.value.status, raised.value.code) == (400, "invalid_parameter")
    assert message in str(raised.value)
