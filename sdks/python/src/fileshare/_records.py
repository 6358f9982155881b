"""The SDK's records: dataclasses that mirror the API's JSON (snake_case, as the API spells it)."""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, ClassVar, Mapping

from ._errors import FileshareError

__all__ = [
    "Record",
    "FileRecord",
    "FileSource",
    "FileScan",
    "Link",
    "Pagination",
    "FileList",
    "Stats",
    "Limits",
    "StatsResult",
    "DownloadResult",
    "CurrentKey",
    "AuditActor",
    "AuditTarget",
    "AuditEvent",
    "AuditPagination",
    "AuditEventList",
    "Webhook",
    "WebhookDelivery",
    "WebhookDeliveryPagination",
    "WebhookDeliveryList",
    "UploadRequest",
    "UploadRequestFilePagination",
    "UploadRequestFileList",
]


class Record:
    """What every record can do: ``to_dict()`` and ``to_json()``."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON object as a dict (nested records too; fields this SDK does not know included)."""
        return _fields_dict(self)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The API's JSON object as a string (``indent=None``: one line)."""
        return json.dumps(self.to_dict(), indent=indent)


def _fields_dict(value: Any) -> dict[str, Any]:
    data = {f.name: _to_dict(getattr(value, f.name)) for f in fields(value) if f.name != "extra"}
    data.update({k: v for k, v in getattr(value, "extra", {}).items() if k not in data})
    return data


def _to_dict(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()  # a nested record, as its own to_dict() writes it
    if is_dataclass(value) and not isinstance(value, type):
        return _fields_dict(value)
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
    source: FileSource | None = None
    """How the file came in: ``type`` ``api``, ``dashboard`` or ``upload_request`` (then with the
    ``request_id`` of the upload request a guest sent it through). None from a server that does
    not say."""
    scan: FileScan | None = None
    """The virus scan (ClamAV) of the file: ``status`` ``pending``, ``clean``, ``infected``,
    ``error`` or ``skipped``. None when the server does not scan files (or did not when this one
    was stored)."""
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
        source = known.get("source")
        known["source"] = None if source is None else FileSource.from_json(source)
        scan = known.get("scan")
        known["scan"] = None if scan is None else FileScan.from_json(scan)
        return cls(**known, extra=MappingProxyType(extra))

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON object as a dict; ``source`` only when the answer had one (``scan`` is
        always there: None when the server does not scan)."""
        data = Record.to_dict(self)
        if self.source is None:
            data.pop("source", None)
        return data


@dataclass(frozen=True, slots=True)
class FileSource(Record):
    """Where a file came from (``FileRecord.source``): ``type`` ``api`` (an API key),
    ``dashboard`` (the web dashboard) or ``upload_request`` (a guest, through the upload request
    ``request_id``: see ``client.upload_requests``). Other types may come: treat them as unknown."""

    type: str
    request_id: int | None = None
    """The upload request's ``request_id`` when ``type`` is ``upload_request``; else None."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON object as a dict (``{"type": "api"}``: ``request_id`` only when there is one)."""
        data = Record.to_dict(self)
        if self.request_id is None:
            data.pop("request_id", None)
        return data

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FileSource:
        known, extra = _split(cls, raw, "file source")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class FileScan(Record):
    """The virus scan of a file (``FileRecord.scan``), on servers that scan with ClamAV.

    ``status`` is one of the constants below: ``pending`` (not scanned yet; where the server serves
    only scanned files its links answer 409 ``scan_pending`` meanwhile), ``clean``, ``infected``
    (its bytes and links are gone and it left the list; ``files.get()`` still answers for its
    owner, with the ``signature``), ``error`` (the scanner could not scan it, being too large for
    it: such a file is never served, 403 ``file_not_scannable``) or ``skipped`` (too large to scan,
    served unscanned). Other statuses may come: treat them as unknown."""

    PENDING: ClassVar[str] = "pending"
    CLEAN: ClassVar[str] = "clean"
    INFECTED: ClassVar[str] = "infected"
    ERROR: ClassVar[str] = "error"
    SKIPPED: ClassVar[str] = "skipped"

    status: str
    signature: str | None = None
    """The name of what the scanner found (``Win.Test.EICAR_HDB-1``); None unless ``infected``."""
    scanned_at: str | None = None
    """UTC, ``YYYY-MM-DD HH:MM:SS``: when the verdict came; None while ``pending``.
    :attr:`scanned` is the same as an aware datetime."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def scanned(self) -> datetime | None:
        """``scanned_at`` as an aware :class:`~datetime.datetime` in UTC (None while pending)."""
        return parse_optional_date(self.scanned_at)

    @property
    def done(self) -> bool:
        """The scan has ended (any status but ``pending``)."""
        return self.status != FileScan.PENDING

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FileScan:
        known, extra = _split(cls, raw, "file scan")
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
class BulkDeleteResult(Record):
    """What ``files.delete_many()`` did: the API's ``deleted`` and ``not_found``, each in the order given."""

    deleted: list[int]
    """The ids deleted by this call."""
    not_found: list[int]
    """The ids that name none of your files (never one, another account's, deleted already or expired)."""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> BulkDeleteResult:
        deleted, not_found = raw.get("deleted"), raw.get("not_found")
        if not isinstance(deleted, list) or not isinstance(not_found, list):
            raise FileshareError("the answer holds no deleted and not_found lists")
        return cls([int(i) for i in deleted], [int(i) for i in not_found])


@dataclass(frozen=True, slots=True)
class ArchiveResult(Record):
    """What ``files.download_archive()`` did."""

    size: int
    """Bytes of the ZIP written."""
    filename: str | None
    """The name the server suggests (``files-YYYYMMDD-HHMMSS.zip``, from ``Content-Disposition``)."""


@dataclass(frozen=True, slots=True)
class DownloadResult(Record):
    """What ``download()`` did."""

    size: int
    """Bytes in the finished file."""
    sha256: str
    """Hex SHA-256 of the finished file, equal to the link's ``ETag``."""
    resumed_from: int
    """Bytes that were already there and were kept (0 when the download started at the beginning)."""


@dataclass(frozen=True, slots=True)
class CurrentKey(Record):
    """The API key the client calls with (``client.key()``, ``GET /key``): what it may do, from
    where, and the account's plan. ``to_dict()`` gives the answer's ``key`` object with ``plan``."""

    key_id: int
    name: str
    """The name given to the key when it was made (dashboard or CLI)."""
    prefix: str
    """The key's first characters (``fsk_Ab12Cd``), as the dashboard shows it; never the key."""
    scopes: list[str]
    """The scopes the key holds (``files:read``, ``files:write``, ``files:delete``, ``links:read``,
    ``links:write``, ``stats:read``, ``webhooks:manage``, ``requests:manage``, ``audit:read``): all
    nine for a full key, in that order."""
    allowed_ips: list[str]
    """Addresses and CIDR ranges the key may call from; empty: anywhere."""
    created_at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`created` is the same as an aware datetime."""
    expires_at: str | None
    """UTC, ``YYYY-MM-DD HH:MM:SS``, or None: the key does not expire. :attr:`expiry` is the same
    as an aware datetime."""
    last_used_at: str | None
    """UTC, ``YYYY-MM-DD HH:MM:SS``, or None; :attr:`last_used` is the same as an aware datetime."""
    plan: str
    """Lower-case plan name of the key's account: ``pro``, ``business`` or ``enterprise``."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent (in ``key`` or beside it) that this SDK does not know yet."""

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.created_at)

    @property
    def expiry(self) -> datetime | None:
        """``expires_at`` as an aware :class:`~datetime.datetime` in UTC (None: the key does not expire)."""
        return parse_optional_date(self.expires_at)

    @property
    def last_used(self) -> datetime | None:
        """``last_used_at`` as an aware :class:`~datetime.datetime` in UTC (None: never used before)."""
        return parse_optional_date(self.last_used_at)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> CurrentKey:
        """From the whole answer of ``GET /key``: ``{"key": {...}, "plan": ...}``."""
        if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), Mapping):
            raise FileshareError("the answer holds no key")
        key = {**raw["key"], "plan": raw.get("plan", raw["key"].get("plan", ""))}
        known, extra = _split(cls, key, "key object")
        extra.update({k: v for k, v in raw.items() if k not in ("success", "key", "plan") and k not in extra})
        known["scopes"] = _strings(known["scopes"], "scopes")
        known["allowed_ips"] = _strings(known["allowed_ips"], "allowed_ips")
        known["plan"] = str(known["plan"] or "")
        return cls(**known, extra=MappingProxyType(extra))


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise FileshareError(f"the answer's {what} is not a list of strings")
    return list(value)


@dataclass(frozen=True, slots=True)
class AuditActor(Record):
    """Who did it: ``type`` ``key`` (an API key: ``id`` is its ``key_id``), ``session`` (the
    dashboard), ``operator`` (the ``fileshare`` CLI), ``public`` (someone with a link), ``guest``
    (someone who sent a file through an upload request: ``id`` is its ``request_id``) or
    ``system`` (the server itself: expiry, the collector, the virus scanner)."""

    type: str
    id: int | None = None
    """The key's, session's or operator's id, or a guest's upload request's ``request_id``; None
    when there is none."""
    name: str | None = None
    """A key's name, where there is one."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> AuditActor:
        known, extra = _split(cls, raw, "actor")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class AuditTarget(Record):
    """What it was done to: ``type`` (``file``, ``link``, ``key``, ``webhook``, ``upload_request``,
    ...) and its ``id``."""

    type: str
    id: int | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> AuditTarget:
        known, extra = _split(cls, raw, "target")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class AuditEvent(Record):
    """One event of the account's audit log (``client.audit_events``): a change, or a sign-in or a
    failed password; reads are not logged."""

    event_id: int
    """Positive, increasing: a later event has a larger one."""
    at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`occurred_at` is the same as an aware datetime."""
    action: str
    """``file.uploaded``, ``file.updated``, ``file.deleted``, ``link.created``, ``key.created``,
    ``session.signed_in``, ``upload_request.created``, ``scan.infected`` (the virus scanner found
    the file infected and removed it; details ``filename``, ``size``, ``signature``), ...
    (``keys-and-audit.md`` lists them all)."""
    actor: AuditActor
    ip: str | None = None
    """The caller's address as the server keeps it: by default IPv4 cut to its /24
    (``203.0.113.0``) and IPv6 to its /48; None when the server keeps none."""
    user_agent: str | None = None
    """The caller's ``User-Agent`` (up to 200 characters), where it sent one."""
    target: AuditTarget | None = None
    details: Mapping[str, Any] = field(default_factory=_empty)
    """A small object that depends on the action (``{"filename": "a.txt", "size": 3}``); never a
    secret. May be empty."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def occurred_at(self) -> datetime:
        """``at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.at)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> AuditEvent:
        known, extra = _split(cls, raw, "audit event")
        known["actor"] = AuditActor.from_json(known["actor"])
        target = known.get("target")
        known["target"] = None if target is None else AuditTarget.from_json(target)
        details = known.get("details")
        known["details"] = MappingProxyType(dict(details)) if isinstance(details, Mapping) else _empty()
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class AuditPagination(Record):
    limit: int
    next_before_id: int | None = None
    """The ``event_id`` to pass as ``before_id`` for the next (older) page; None on the last page."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> AuditPagination:
        known, extra = _split(cls, raw, "pagination")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class AuditEventList(Record):
    """One page of audit events (``audit_events.list()``), newest first."""

    events: list[AuditEvent]
    pagination: AuditPagination

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> AuditEventList:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("events"), list) or "pagination" not in raw:
            raise FileshareError("the answer holds no list of audit events")
        return cls([AuditEvent.from_json(e) for e in raw["events"]], AuditPagination.from_json(raw["pagination"]))


@dataclass(frozen=True, slots=True)
class Webhook(Record):
    """A webhook endpoint (``client.webhooks``): where the server sends which events, signed with
    its secret (check them with :class:`fileshare.Webhooks`)."""

    webhook_id: int
    url: str
    """The https URL the messages are POSTed to."""
    events: list[str]
    """The event types sent there (``file.uploaded``, ``link.created``, ...), or ``["*"]``: all.
    The server keeps them in its own order of the types, not necessarily the order given."""
    description: str | None
    enabled: bool
    """False: nothing is sent (see ``disabled_reason``); ``update(id, enabled=True)`` turns it on again."""
    disabled_reason: str | None
    """Why the endpoint is off: ``gone`` (it answered 410), ``failing`` (no success for 5 days),
    ``owner`` (turned off by the account); None while it is enabled."""
    created_at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`created` is the same as an aware datetime."""
    secret: str | None = field(default=None, repr=False, compare=False)
    """The signing secret (``whsec_...``): only in the answers of ``create()`` and
    ``rotate_secret()``, None elsewhere. Keep it where the receiver can read it: it is not shown
    again. Never in ``repr``; not compared by ``==``."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.created_at)

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON object as a dict; ``secret`` only when the answer had one."""
        data = Record.to_dict(self)
        if self.secret is None:
            data.pop("secret", None)
        return data

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Webhook:
        known, extra = _split(cls, raw, "webhook object")
        known["events"] = _strings(known["events"], "events")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class WebhookDelivery(Record):
    """One message to one endpoint and its attempts (``client.webhooks.deliveries()``); kept 30 days."""

    delivery_id: int
    event_type: str
    """The event's ``type``: ``file.uploaded``, ``webhook.test``, ..."""
    message_id: str
    """``msg_...``: the ``webhook-id`` header the receiver saw (the same on every attempt)."""
    attempts: int
    """Attempts made so far."""
    last_status: int | None
    """The HTTP status of the last attempt; None before the first, or when it got no answer."""
    last_error: str | None
    """A short reason for the last attempt's failure (a timeout, a refused address, ...), or None."""
    next_attempt_at: str | None
    """UTC, ``YYYY-MM-DD HH:MM:SS``: when the next attempt is due; None once it ``succeeded`` or
    ``failed``. :attr:`next_attempt` is the same as an aware datetime."""
    state: str
    """``pending`` (attempts to come), ``succeeded`` (a 2xx) or ``failed`` (no more attempts;
    ``webhooks.retry_delivery()`` sends it again)."""
    created_at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`created` is the same as an aware datetime."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.created_at)

    @property
    def next_attempt(self) -> datetime | None:
        """``next_attempt_at`` as an aware :class:`~datetime.datetime` in UTC, or None."""
        return parse_optional_date(self.next_attempt_at)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> WebhookDelivery:
        known, extra = _split(cls, raw, "webhook delivery")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class WebhookDeliveryPagination(Record):
    limit: int
    next_before_id: int | None = None
    """The ``delivery_id`` to pass as ``before_id`` for the next (older) page; None on the last page."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> WebhookDeliveryPagination:
        known, extra = _split(cls, raw, "pagination")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class WebhookDeliveryList(Record):
    """One page of an endpoint's deliveries (``webhooks.deliveries()``), newest first."""

    deliveries: list[WebhookDelivery]
    pagination: WebhookDeliveryPagination

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> WebhookDeliveryList:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("deliveries"), list) or "pagination" not in raw:
            raise FileshareError("the answer holds no list of webhook deliveries")
        return cls(
            [WebhookDelivery.from_json(d) for d in raw["deliveries"]],
            WebhookDeliveryPagination.from_json(raw["pagination"]),
        )


@dataclass(frozen=True, slots=True)
class UploadRequest(Record):
    """An upload request (``client.upload_requests``): a link (``url``) at which someone without
    an account sends files into this account, within its limits and until it expires."""

    request_id: int
    """Unique, never reused."""
    url: str
    """``<public URL>/r/<token>``: the guest's page; works without a key. Its last path segment
    is the request's token."""
    label: str
    """Shown to the guest (1 to 200 characters, one line)."""
    message: str | None
    """Plain text shown to the guest (up to 2,000 characters, newlines kept), or None."""
    expires_at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``: from then on the request takes no file (``status``
    ``expired``). :attr:`expiry` is the same as an aware datetime."""
    max_files: int | None
    """Files it takes at most; None: no limit of its own."""
    max_file_size: int | None
    """Bytes per file at most; None: the plan's limit."""
    max_total_size: int | None
    """Bytes it takes at most, all files together; None: no limit of its own."""
    file_expires_in: int | None
    """Seconds each received file lives from its upload; None: the files do not expire."""
    password_protected: bool
    """The guest must give a password first (it is never returned)."""
    files_received: int
    bytes_received: int
    status: str
    """``active``, ``expired`` (past ``expires_at``), ``closed`` (closed or deleted by the
    account) or ``full`` (``max_files`` files or ``max_total_size`` bytes received). ``closed``
    wins over ``expired``, which wins over ``full``."""
    created_at: str
    """UTC, ``YYYY-MM-DD HH:MM:SS``; :attr:`created` is the same as an aware datetime."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)
    """Fields the server sent that this SDK does not know yet."""

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.created_at)

    @property
    def expiry(self) -> datetime:
        """``expires_at`` as an aware :class:`~datetime.datetime` in UTC."""
        return parse_upload_date(self.expires_at)

    @property
    def files_left(self) -> int | None:
        """``max_files - files_received`` (never below 0), or None without a file limit."""
        return None if self.max_files is None else max(0, self.max_files - self.files_received)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> UploadRequest:
        known, extra = _split(cls, raw, "upload request object")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class UploadRequestFilePagination(Record):
    limit: int
    next_before_id: int | None = None
    """The ``file_id`` to pass as ``before_id`` for the next (older) page; None on the last page."""
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> UploadRequestFilePagination:
        known, extra = _split(cls, raw, "pagination")
        return cls(**known, extra=MappingProxyType(extra))


@dataclass(frozen=True, slots=True)
class UploadRequestFileList(Record):
    """One page of the files an upload request received (``upload_requests.files()``), newest first."""

    files: list[FileRecord]
    pagination: UploadRequestFilePagination

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> UploadRequestFileList:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("files"), list) or "pagination" not in raw:
            raise FileshareError("the answer holds no list of the upload request's files")
        return cls([FileRecord.from_json(f) for f in raw["files"]], UploadRequestFilePagination.from_json(raw["pagination"]))
