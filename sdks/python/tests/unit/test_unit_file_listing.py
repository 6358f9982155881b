"""Unit tests with httpx.MockTransport: files.list and files.iterate with a search and an order
(q, sort, order), on both clients. A scripted server lists as the real one does; the tests check
the query of every request and how iterate pages (by before_id in upload order, either direction;
by page number in the other orders)."""

from __future__ import annotations

import typing
from typing import Any, Callable

import httpx
import pytest

import fileshare
from mock_api import FILE, error, make_either, sequence

Stored = dict[str, Any]
SORTS: tuple[str, ...] = typing.get_args(fileshare.FileSort)
ORDERS: tuple[str, ...] = typing.get_args(fileshare.SortOrder)


def stored(n: int) -> list[Stored]:
    """Files 1..n, uploaded in id order, with names, sizes and download counts in other orders."""
    return [
        {
            "file_id": i + 1,
            "filename": f"{chr(97 + i * 7 % 26)}-{'Report' if i % 2 == 0 else 'photo'}.txt",
            "size": i * 5 % n * 10,
            "download_count": i * 3 % 4,
        }
        for i in range(n)
    ]


KEYS: dict[str, Callable[[Stored], Any]] = {
    "upload_date": lambda f: f["file_id"],
    "filename": lambda f: f["filename"].lower(),
    "size": lambda f: f["size"],
    "download_count": lambda f: f["download_count"],
}


def listing(files: list[Stored], params: httpx.QueryParams) -> httpx.Response:
    """``GET /files`` over ``files`` as the server answers it: q (any case), sort, order (ties by id
    in the same direction), page or before_id; before_id (the files past it in id order) only in
    upload order, else 400 invalid_parameter."""
    limit = int(params.get("limit", 20))
    sort = params.get("sort", "upload_date")
    descending = params.get("order", "desc") == "desc"
    q = params.get("q")
    before = params.get("before_id")
    if before is not None and sort != "upload_date":
        return error(400, "invalid_parameter")
    key = KEYS[sort]
    matching = [f for f in files if q is None or q.lower() in f["filename"].lower()]
    matching.sort(key=lambda f: (key(f), f["file_id"]), reverse=descending)
    total = len(matching)
    page: int | None = None
    if before is not None:
        rest = [f for f in matching if (f["file_id"] < int(before) if descending else f["file_id"] > int(before))]
    else:
        page = int(params.get("page", 1))
        rest = matching[(page - 1) * limit :]
    shown = rest[:limit]
    pagination = {"page": page, "limit": limit, "total": total, "pages": -(-total // limit), "next_before_id": shown[-1]["file_id"] if len(rest) > limit else None}
    return httpx.Response(200, json={"success": True, "files": [{**FILE, **f} for f in shown], "pagination": pagination})


def file_server(files: list[Stored]) -> tuple[Callable[[httpx.Request], httpx.Response], list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return listing(files, request.url.params)

    return handler, seen


def queries(requests: list[httpx.Request]) -> list[str]:
    return [request.url.query.decode() for request in requests]


def test_the_sorts_and_orders_are_the_apis() -> None:
    assert SORTS == ("upload_date", "filename", "size", "download_count")
    assert ORDERS == ("asc", "desc")


def test_list_sends_q_sort_and_order_with_page_and_limit_and_nothing_unasked(flavour: str) -> None:
    handler, seen = file_server(stored(5))
    client, _ = make_either(flavour, handler)
    client.files.list()
    result = client.files.list(page=2, limit=2, q="Report", sort="size", order="asc")
    client.files.list(q="50% off & more")
    client.files.list(before_id=2, order="asc", limit=2)
    assert queries(seen) == [
        "",
        "page=2&limit=2&q=Report&sort=size&order=asc",
        "q=50%25+off+%26+more",
        "limit=2&before_id=2&order=asc",
    ]
    assert (result.pagination.page, result.pagination.total) == (2, 3)


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("order", ORDERS)
def test_iterate_yields_every_match_once_in_order_with_the_query_on_every_page(flavour: str, sort: str, order: str) -> None:
    files = stored(23)
    handler, seen = file_server(files)
    client, _ = make_either(flavour, handler)
    ids = [f.file_id for f in client.files.iterate(limit=5, q="REPORT", sort=sort, order=order)]
    everything = listing(files, httpx.QueryParams({"limit": 100, "q": "REPORT", "sort": sort, "order": order})).json()["files"]
    assert len(everything) == 12
    assert ids == [f["file_id"] for f in everything]
    sent = queries(seen)
    assert len(sent) == 3 and all(f"q=REPORT&sort={sort}&order={order}" in query for query in sent)
    if sort == "upload_date":  # upload order pages by before_id, in either direction
        assert all("before_id=" in query and "page=" not in query for query in sent[1:])
    else:
        assert sent[1:] == [f"page={n}&limit=5&q=REPORT&sort={sort}&order={order}" for n in (2, 3)]


def test_iterate_oldest_first_pages_by_before_id_going_up(flavour: str) -> None:
    handler, seen = file_server(stored(5))
    client, _ = make_either(flavour, handler)
    assert [f.file_id for f in client.files.iterate(limit=2, order="asc")] == [1, 2, 3, 4, 5]
    assert queries(seen) == ["limit=2&order=asc", "limit=2&before_id=2&order=asc", "limit=2&before_id=4&order=asc"]


def test_iterate_oldest_first_stops_when_next_before_id_does_not_go_up(flavour: str) -> None:
    def page(ids: list[int], following: int | None) -> httpx.Response:
        pagination = {"page": None, "limit": 2, "total": 9, "pages": 5, "next_before_id": following}
        return httpx.Response(200, json={"success": True, "files": [{**FILE, "file_id": i} for i in ids], "pagination": pagination})

    handler, _ = sequence(page([1, 2], 2), page([2, 3], 3), page([4, 5], 3))
    client, _ = make_either(flavour, handler)
    seen: list[int] = []
    with pytest.raises(fileshare.FileshareError, match="next_before_id 3 does not move past 3"):
        for file in client.files.iterate(limit=2, order="asc"):
            seen.append(file.file_id)
    assert seen == [1, 2, 3, 4, 5]


def test_iterate_by_page_number_yields_a_shifted_file_once(flavour: str) -> None:
    def page(ids: list[int], number: int) -> httpx.Response:
        pagination = {"page": number, "limit": 2, "total": 5, "pages": 3, "next_before_id": None}
        return httpx.Response(200, json={"success": True, "files": [{**FILE, "file_id": i} for i in ids], "pagination": pagination})

    handler, seen = sequence(page([4, 2], 1), page([2, 5], 2), page([1], 3))
    client, _ = make_either(flavour, handler)
    assert [f.file_id for f in client.files.iterate(limit=2, sort="filename")] == [4, 2, 5, 1]
    assert [r.url.params.get("page") for r in seen] == [None, "2", "3"]


def test_iterate_with_no_match_makes_one_request(flavour: str) -> None:
    handler, seen = file_server(stored(5))
    client, _ = make_either(flavour, handler)
    assert list(client.files.iterate(q="nothing like it", sort="size")) == []
    assert queries(seen) == ["limit=100&q=nothing+like+it&sort=size"]


STATES: tuple[str, ...] = typing.get_args(fileshare.FileState)


def test_the_states_are_the_apis() -> None:
    assert STATES == ("expiring", "expired_links", "from_upload_request")


def test_list_sends_type_and_state_once_each_or_repeated_with_the_other_parameters(flavour: str) -> None:
    handler, seen = file_server(stored(5))
    client, _ = make_either(flavour, handler)
    client.files.list(type="image")
    client.files.list(state="expiring")
    client.files.list(type=["application/pdf", "text"], state=("expired_links", "from_upload_request"))
    client.files.list(type=[], state=[])  # an empty list sends nothing
    client.files.list(page=2, limit=2, q="Report", sort="size", order="asc", type="text/plain", state="expiring")
    client.files.list(before_id=4, limit=2, q="a", type=["image", "video"], state=["expiring", "expired_links"])
    assert queries(seen) == [
        "type=image",
        "state=expiring",
        "type=application%2Fpdf&type=text&state=expired_links&state=from_upload_request",
        "",
        "page=2&limit=2&q=Report&sort=size&order=asc&type=text%2Fplain&state=expiring",
        "limit=2&before_id=4&q=a&type=image&type=video&state=expiring&state=expired_links",
    ]


@pytest.mark.parametrize("sort", [None, "size"])
def test_iterate_keeps_type_and_state_on_every_page_by_before_id_or_page(flavour: str, sort: str | None) -> None:
    handler, seen = file_server(stored(3))
    client, _ = make_either(flavour, handler)
    filters = {"type": ["image", "application/pdf"], "state": ["expiring", "from_upload_request"]}
    assert len(list(client.files.iterate(limit=2, q="o", sort=sort, **filters))) == 3
    kept = "q=o" + ("&sort=size" if sort else "") + "&type=image&type=application%2Fpdf&state=expiring&state=from_upload_request"
    if sort:
        assert queries(seen) == [f"limit=2&{kept}", f"page=2&limit=2&{kept}"]
    else:
        assert queries(seen) == [f"limit=2&{kept}", f"limit=2&before_id=2&{kept}"]
