"""``fileshare.Webhooks``: checks that a webhook message came from the server, per Standard Webhooks.

Works with no client and no server: it needs the endpoint's secret, the raw body and the headers.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ._errors import WebhookVerificationError

__all__ = ["Webhooks", "HeadersInput", "DEFAULT_TOLERANCE", "SECRET_PREFIX"]

DEFAULT_TOLERANCE = 300
"""Seconds a message's ``webhook-timestamp`` may be from now, either way (5 minutes)."""
SECRET_PREFIX = "whsec_"

Body = bytes | bytearray | memoryview | str
"""The raw body as received: bytes, or the text exactly as it came (encoded as UTF-8 to check it)."""
HeadersInput = Mapping[str, str] | Iterable[tuple[str | bytes, str | bytes]]
"""A request's headers: a mapping (a dict in any letter case, ``httpx.Headers``, Starlette's
``Headers``) or (name, value) pairs (Werkzeug's ``Headers`` of Flask, an ASGI scope's list)."""


class Webhooks:
    """Verifies the webhook messages of one endpoint, signed with its secret (``whsec_...``).

        webhooks = fileshare.Webhooks(os.environ["FILESHARE_WEBHOOK_SECRET"])
        event = webhooks.verify(raw_body, request.headers)   # or raises WebhookVerificationError
        if event["type"] == "file.uploaded": ...

    The secret is the one ``client.webhooks.create()`` or ``rotate_secret()`` answered; it never
    shows in ``repr``. A secret that is not ``whsec_`` and base64 raises
    :class:`~fileshare.WebhookVerificationError` here, at once.
    """

    __slots__ = ("__key",)

    def __init__(self, secret: str) -> None:
        self.__key = _key(secret)

    def __repr__(self) -> str:
        return "Webhooks(secret='[redacted]')"

    def verify(
        self,
        body: Body,
        headers: HeadersInput,
        *,
        tolerance: float | timedelta = DEFAULT_TOLERANCE,
        now: float | datetime | None = None,
    ) -> dict[str, Any]:
        """The event of a message (``{"type": ..., "timestamp": ..., "data": {...}}``, parsed from
        ``body``) once its signature and timestamp check out.

        ``body`` is the raw body exactly as received (bytes, or its text): not JSON parsed and
        dumped again, which changes the bytes. ``headers`` are the request's headers: a mapping (a
        dict in any letter case, ``httpx.Headers``, Starlette's ``request.headers``) or (name,
        value) pairs (Flask's ``request.headers``, an ASGI scope's ``headers``); it needs
        ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature``. One ``v1,`` signature
        among those (space-separated) must match: during a secret's rotation the server sends one
        per secret; other versions are ignored. The comparison takes constant time.

        ``webhook-timestamp`` must be within ``tolerance`` (seconds, default 300) of ``now``
        (default the clock: pass a Unix time or an aware datetime in tests), either way: a replay
        of an old message fails. Deduplicate by ``webhook-id``: a retry of one message keeps it.

        Raises :class:`~fileshare.WebhookVerificationError` naming what failed: a header missing,
        a timestamp not a number or out of the tolerance, no matching signature, a body that is
        not a JSON object.
        """
        pairs = _pairs(headers)
        msg_id = _header(pairs, "webhook-id")
        timestamp = _header(pairs, "webhook-timestamp")
        signatures = _header(pairs, "webhook-signature")
        sent_at = _timestamp(timestamp)
        _check_time(sent_at, _seconds(tolerance), _now(now))
        raw = _bytes(body)
        expected = self.__digest(msg_id, timestamp, raw)
        versions = [entry.partition(",") for entry in signatures.split()]
        offered = [signature for version, comma, signature in versions if version == "v1" and comma]
        if not offered:
            raise WebhookVerificationError("the webhook-signature header holds no v1 signature")
        matched = False
        for signature in offered:
            # every signature is compared, each in constant time, so the time taken tells nothing
            matched |= hmac.compare_digest(expected, _decode(signature))
        if not matched:
            raise WebhookVerificationError("no signature in webhook-signature matches the body with this secret")
        try:
            event = json.loads(raw)
        except ValueError:
            raise WebhookVerificationError("the body is not JSON (its signature is valid)") from None
        if not isinstance(event, dict):
            raise WebhookVerificationError("the body is not a JSON object (its signature is valid)")
        return event

    def sign(self, msg_id: str, timestamp: int, body: Body) -> str:
        """The ``webhook-signature`` value the server would send for this message
        (``v1,<base64>``): for testing a receiver without the server."""
        return "v1," + base64.b64encode(self.__digest(msg_id, str(timestamp), _bytes(body))).decode("ascii")

    def __digest(self, msg_id: str, timestamp: str, body: bytes) -> bytes:
        signed = f"{msg_id}.{timestamp}.".encode() + body
        return hmac.new(self.__key, signed, hashlib.sha256).digest()


def _key(secret: str) -> bytes:
    if not isinstance(secret, str) or not secret:
        raise WebhookVerificationError("the webhook secret must be a string: whsec_ and base64, as the server answered it")
    encoded = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the webhook secret is not whsec_ followed by base64") from None
    if not key:
        raise WebhookVerificationError("the webhook secret is empty after whsec_")
    return key


def _pairs(headers: HeadersInput) -> list[tuple[str, str]]:
    """The headers as (lower-case name, value) pairs, from a mapping or from pairs."""
    items = getattr(headers, "items", None)
    pairs: list[Any] | None
    try:
        pairs = list(items() if callable(items) else headers)
    except TypeError:
        pairs = None
    if pairs is None or isinstance(headers, (str, bytes)) or not all(isinstance(pair, tuple) and len(pair) == 2 for pair in pairs):
        raise WebhookVerificationError(
            "headers must be a mapping of header names to values (a dict, httpx.Headers, ...) or (name, value) pairs"
        )
    result: list[tuple[str, str]] = []
    for key, value in pairs:
        name = key.decode("latin-1") if isinstance(key, bytes) else key
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if isinstance(name, str) and isinstance(text, str):
            result.append((name.lower(), text))
    return result


def _header(pairs: list[tuple[str, str]], name: str) -> str:
    """One header's value; a name given twice (two letter cases in a dict, a header sent twice)
    must have the same value each time."""
    found: str | None = None
    for key, value in pairs:
        if key == name:
            if found is not None and value.strip() != found:
                raise WebhookVerificationError(f"the {name} header is given twice, with different values")
            found = value.strip()
    if not found:
        raise WebhookVerificationError(f"the {name} header is missing")
    return found


def _timestamp(value: str) -> int:
    if not value.isascii() or not value.isdigit():
        raise WebhookVerificationError(f"the webhook-timestamp header is not a Unix time in seconds: {value[:40]!r}")
    return int(value)


def _seconds(tolerance: float | timedelta) -> float:
    seconds = tolerance.total_seconds() if isinstance(tolerance, timedelta) else tolerance
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise WebhookVerificationError("tolerance must be a non-negative number of seconds or a timedelta")
    return float(seconds)


def _now(now: float | datetime | None) -> float:
    if now is None:
        return time.time()
    if isinstance(now, datetime):
        if now.tzinfo is None:
            raise WebhookVerificationError("now must be an aware datetime (a naive one has no place in time)")
        return now.timestamp()
    return float(now)


def _check_time(sent_at: int, tolerance: float, now: float) -> None:
    if sent_at < now - tolerance:
        raise WebhookVerificationError(
            f"the message is too old: its webhook-timestamp is {now - sent_at:.0f} s before now (tolerance {tolerance:.0f} s)"
        )
    if sent_at > now + tolerance:
        raise WebhookVerificationError(
            f"the message is from the future: its webhook-timestamp is {sent_at - now:.0f} s after now (tolerance {tolerance:.0f} s)"
        )


def _bytes(body: Body) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise WebhookVerificationError(f"the body must be the raw bytes or text as received, not {type(body).__name__}")


def _decode(signature: str) -> bytes:
    """A signature's bytes; one that is not base64 matches nothing (it still takes its comparison)."""
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return b""
