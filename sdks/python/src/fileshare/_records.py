"""The SDK's records: dataclasses that mirror the API's JSON (snake_case, as the API spells it)."""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Mapping

from ._errors import FileshareError

__all__ = ["Record", "FileRecord", "Link", "Pagination", "FileList", "Stats", "Limits", "StatsResult", "DownloadResult"]


class Record:
    """What every record can do: ``to_dict()`` and ``to_json()``."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON object as a dict (nested records too; fields this SDK does not know included)."""
        data: dict[str, Any] = _to_dict(self)
        return data

    def to_json(self, *, indent: int | None = 2) -> str:
        """The API's JSON object as a string (``indent=None``: one line)."""
        return json.dumps(self.to_dict(), indent=indent)


def _to_dict(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        data = {f.name: _to_dict(getattr(value, f.name)) for f in fields(value) if f.name != "extra"}
        data.update({k: v for k, v in getattr(value, "extra", {}).items() if k not in data})
        return data
    if isinstance(value, list):
        return [_to_dict(item) for item in value]
    if isinstance(value, Mapping):
        return {k: _to_dict(v) for k, v in value.items()}
    return value


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$")


def parse_upload_date(value: str) -> datetime:
    """``YYYY-MM-DD HH:MM:SS`` (UTC) as an aware datetime; also accepts ISO 8601 with an offset."""
    match = _DATE.match(value)
    if not match:
        raise ValueError(f"not a date: {value!r}")
    zone = match.group(8)
    text = value.replace(" ", "T", 1)
    if zone is None:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def parse_optional_date(value: str | None) -> datetime | None:
    return None if value is None else parse_upload_date(value)


def _split(cls: type[Any], raw: Mapping[str, Any], what: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields ``cls`` knows (those with a default may be missing: older servers) and the rest."""
    if not isinstance(raw, Mapping):
        raise FileshareError(f"the answer holds no {what}")
    known_fields = [f for f in fields(cls) if f.name != "extra"]
    missing = [f.name for f in known_fields if f.name not in raw and f.default is MISSING]
    if missing:
        raise FileshareError(f"the answer's {what} lacks {', '.join(missing)}")
    known = {f.name: raw[f.name] for f in known_fields if f.name in raw}
    extra = {k: v for k, v in raw.items() if k not in known and k != "success"}
    return known, extra


@dataclass(frozen=True, slots=True)
class FileRecord(Record):
    """A file, as ``GET /files/{file_id}`` describes it."""

    file_id: int
    """Unique across the service, never reused."""
    filename: str
    size: int
    """Bytes."""
    upload_date: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`uploaded_at` is the same as an aware datetime."""
    download_count: int
    public_link: str
    """``<public URL>/download/<token>``; works without a key."""
    content_type: str
    sha256: str
    """Lower-case hex SHA-256 of the content; also the download ``ETag``."""
    expires_at: str | None = None
    """UTC, ``YYYY-MM-DD HH:MM:SS``: from then on the file and its links are gone; None: no expiry.
    :attr:`expiry` is the same as an aware datetime."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def uploaded_at(self) -> datetime:
        """``upload_date`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.upload_date)

    @property
    def expiry(self) -> datetime | None:
        """``expires_at`` as an aware :class:`~datetime.datetime` in UTC (None: the file does not expire)."""
        return parse_optional_date(self.expires_at)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FileRecord:
        known, extra = _split(cls, raw, "file object")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class Link(Record):
    """A link to a file (``client.links``): its URL, its policy and its counts.

    Every file has a default link (its ``public_link``) and may have more, each with its own
    token, expiry, download limit and password."""

    link_id: int
    file_id: int
    url: str
    """``<public URL>/download/<token>``; works without a key (see ``download(..., password=)``)."""
    default: bool
    """The file's default link (its ``public_link``): it cannot be deleted, only rotated."""
    label: str | None
    expires_at: str | None
    """UTC, ``YYYY-MM-DD HH:MM:SS``, or None; :attr:`expiry` is the same as an aware datetime."""
    max_downloads: int | None
    """None: unlimited."""
    download_count: int
    password_protected: bool
    status: str
    """``active``, ``expired`` (past ``expires_at``, or the file expired), ``exhausted``
    (``download_count`` reached ``max_downloads``) or ``revoked`` (deleted; listed for 30 days)."""
    created_at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`created` is the same as an aware datetime."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.created_at)

    @property
    def expiry(self) -> datetime | None:
        """``expires_at`` as an aware :class:`~datetime.datetime` in UTC (None: the link does not expire)."""
        return parse_optional_date(self.expires_at)

    @property
    def downloads_left(self) -> int | None:
        """``max_downloads - download_count`` (never below 0), or None when unlimited."""
        return None if self.max_downloads is None else max(0, self.max_downloads - self.download_count)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Link:
        known, extra = _split(cls, raw, "link object")
        return cls(**known, extra=MappingProxyType(extra))


def member(data: Any, key: str, what: str) -> Any:
    """``data[key]`` of a JSON answer, or the error that says the answer holds no such thing."""
    if not isinstance(data, Mapping) or key not in data:
        raise FileshareError(f"the answer holds no {what}")
    return data[key]


@dataclass(frozen=True, slots=True)
class Pagination(Record):
    page: int | None
    """The page number asked for (from 1); None for a page asked by ``before_id``."""
    limit: int
    total: int
    """Number of files the account has now."""
    pages: int
    """``ceil(total / limit)``; 0 when there are no files."""
    next_before_id: int | None = None
    """The ``file_id`` of this page's last file when more files follow it (pass it as ``before_id``
    for the next page), else None."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Pagination:
        known, extra = _split(cls, raw, "pagination")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class FileList(Record):
    """One page of files (``files.list()``)."""

    files: list[FileRecord]
    pagination: Pagination

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FileList:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("files"), list) or "pagination" not in raw:
            raise FileshareError("the answer holds no file list")
        return cls([FileRecord.from_json(f) for f in raw["files"]], Pagination.from_json(raw["pagination"]))


@dataclass(frozen=True, slots=True)
class Stats(Record):
    total_files: int
    total_size: int
    """Bytes of the files stored (not counting ``storage_reserved``)."""
    total_downloads: int
    uploads_today: int
    storage_reserved: int = 0
    """Bytes held for uploads in progress (they count against ``limits.max_storage`` with ``total_size``)."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Stats:
        known, extra = _split(cls, raw, "stats")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class Limits(Record):
    max_file_size: int
    daily_uploads: int
    requests_per_minute: int
    requests_per_day: int
    max_storage: int | None = None
    """Bytes the account may keep (its files plus ``stats.storage_reserved``); None: unlimited."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Limits:
        known, extra = _split(cls, raw, "limits")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class StatsResult(Record):
    """The answer of ``stats()``: statistics, limits and plan. Unknown fields are kept in ``extra``."""

    stats: Stats
    limits: Limits
    plan: str
    """Lower-case plan name: ``pro``, ``business`` or ``enterprise``."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Top-level fields the server sent that this SDK does not know yet."""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> StatsResult:
        if not isinstance(raw, Mapping) or "stats" not in raw or "limits" not in raw:
            raise FileshareError("the answer holds no statistics")
        extra = {k: v for k, v in raw.items() if k not in ("success", "stats", "limits", "plan")}
        return cls(
            Stats.from_json(raw["stats"]),
            Limits.from_json(raw["limits"]),
            str(raw.get("plan", "")),
            MappingProxyType(extra),
        )


@dataclass(frozen=True, slots=True)
class DownloadResult(Record):
    """What ``download()`` did."""

    size: int
    """Bytes in the finished file."""
    sha256: str
    """Hex SHA-256 of the finished file, equal to the link's ``ETag``."""
    resumed_from: int
    """Bytes that were already there and were kept (0 when the download started at the beginning)."""
