"""Unit tests of the webhook verifier (issue 33): fileshare.Webhooks(secret).verify(body, headers)
against the Standard Webhooks reference vector, every way a message can fail, and headers as a
dict in any letter case, as httpx.Headers, as (name, value) pairs, and as Starlette's and Werkzeug's
headers where those are installed."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

import fileshare
from fileshare import WebhookVerificationError, Webhooks

# The reference test vector of the Standard Webhooks specification (standardwebhooks.com).
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TS = 1614265330
BODY = b'{"test": 2432232314}'
SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(signature: str = SIG, msg_id: str = MSG_ID, timestamp: int | str = TS) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def signed(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The signature computed here, apart from the SDK: HMAC-SHA256 over ``id.timestamp.body``."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def fails(match: str, body: Any = BODY, given: Any = None, secret: str = SECRET, **options: Any) -> WebhookVerificationError:
    options.setdefault("now", TS)
    with pytest.raises(WebhookVerificationError, match=match) as caught:
        Webhooks(secret).verify(body, headers() if given is None else given, **options)
    return caught.value


# -- the reference vector ---------------------------------------------------------------------


def test_the_standard_webhooks_reference_vector() -> None:
    assert Webhooks(SECRET).verify(BODY, headers(), now=TS) == {"test": 2432232314}
    assert signed(SECRET, MSG_ID, TS, BODY) == SIG  # the test's own HMAC agrees with the vector


@pytest.mark.parametrize("body", [BODY, BODY.decode(), bytearray(BODY), memoryview(BODY)], ids=["bytes", "str", "bytearray", "memoryview"])
def test_the_body_as_bytes_or_text(body: Any) -> None:
    assert Webhooks(SECRET).verify(body, headers(), now=TS) == {"test": 2432232314}


def test_sign_gives_what_the_server_sends() -> None:
    webhooks = Webhooks(SECRET)
    assert webhooks.sign(MSG_ID, TS, BODY) == SIG and webhooks.sign(MSG_ID, TS, BODY.decode()) == SIG


def test_a_secret_without_its_prefix_is_the_same_key() -> None:
    assert Webhooks(SECRET.removeprefix("whsec_")).verify(BODY, headers(), now=TS) == {"test": 2432232314}


def test_now_as_an_aware_datetime() -> None:
    at = datetime.fromtimestamp(TS, timezone.utc).astimezone(timezone(timedelta(hours=-5)))
    assert Webhooks(SECRET).verify(BODY, headers(), now=at) == {"test": 2432232314}
    fails("aware datetime", now=datetime(2021, 2, 21, 15, 2, 10))


# -- headers of every shape -------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ("webhook-id", "webhook-timestamp", "webhook-signature"),
        ("Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"),
        ("WEBHOOK-ID", "WEBHOOK-TIMESTAMP", "WEBHOOK-SIGNATURE"),
        ("wEbHoOk-iD", "Webhook-timestamp", "webhook-SIGNATURE"),
    ],
)
def test_headers_as_a_dict_in_any_letter_case(names: tuple[str, str, str]) -> None:
    given = {names[0]: MSG_ID, names[1]: str(TS), names[2]: SIG, "Content-Type": "application/json"}
    assert Webhooks(SECRET).verify(BODY, given, now=TS) == {"test": 2432232314}


def test_headers_as_httpx_headers() -> None:
    given = httpx.Headers({"Webhook-Id": MSG_ID, "Webhook-Timestamp": str(TS), "Webhook-Signature": SIG})
    assert Webhooks(SECRET).verify(BODY, given, now=TS) == {"test": 2432232314}
    # what an httpx request a test client builds carries, as the receiver sees it
    request = httpx.Request("POST", "http://receiver.test/hook", content=BODY, headers=headers())
    assert Webhooks(SECRET).verify(request.content, request.headers, now=TS) == {"test": 2432232314}


def test_headers_as_pairs_of_text_or_bytes() -> None:
    text_pairs = [("Webhook-Id", MSG_ID), ("Webhook-Timestamp", str(TS)), ("Webhook-Signature", SIG)]
    assert Webhooks(SECRET).verify(BODY, text_pairs, now=TS) == {"test": 2432232314}
    asgi_scope_headers = [(k.lower().encode(), v.encode()) for k, v in text_pairs]  # an ASGI scope's "headers"
    assert Webhooks(SECRET).verify(BODY, asgi_scope_headers, now=TS) == {"test": 2432232314}


def test_headers_of_starlette_as_fastapi_gives_them() -> None:
    datastructures = pytest.importorskip("starlette.datastructures", reason="Starlette is not installed (python3-starlette)")
    scope_headers = [(k.encode(), v.encode()) for k, v in headers().items()]
    request_headers = datastructures.Headers(scope={"type": "http", "headers": scope_headers})  # FastAPI's request.headers
    assert Webhooks(SECRET).verify(BODY, request_headers, now=TS) == {"test": 2432232314}


def test_headers_of_werkzeug_as_flask_gives_them() -> None:
    test = pytest.importorskip("werkzeug.test", reason="Werkzeug is not installed (python3-werkzeug)")
    datastructures = pytest.importorskip("werkzeug.datastructures")
    environ = test.EnvironBuilder(method="POST", data=BODY, headers=headers()).get_environ()
    request_headers = datastructures.EnvironHeaders(environ)  # Flask's request.headers
    assert Webhooks(SECRET).verify(BODY, request_headers, now=TS) == {"test": 2432232314}


def test_surrounding_spaces_in_header_values_are_ignored() -> None:
    given = {"webhook-id": f" {MSG_ID} ", "webhook-timestamp": f" {TS}", "webhook-signature": f"  {SIG}  "}
    assert Webhooks(SECRET).verify(BODY, given, now=TS) == {"test": 2432232314}


def test_one_header_in_two_letter_cases_must_agree() -> None:
    same = {**headers(), "Webhook-Id": MSG_ID}
    assert Webhooks(SECRET).verify(BODY, same, now=TS) == {"test": 2432232314}
    fails("webhook-id header is given twice", given={**headers(), "Webhook-Id": "msg_other"})


@pytest.mark.parametrize("given", ["webhook-id: x", b"webhook-id", 42, [("only-a-name",)]], ids=["str", "bytes", "int", "not-pairs"])
def test_headers_that_are_not_headers(given: Any) -> None:
    fails("headers must be a mapping", given=given)


# -- every failure ----------------------------------------------------------------------------


def test_a_tampered_body() -> None:
    fails("no signature .* matches", body=b'{"test": 2432232315}')
    fails("no signature .* matches", body=BODY + b" ")
    fails("no signature .* matches", body=json.dumps(json.loads(BODY)).encode().replace(b" ", b""))  # parsed and dumped again


def test_another_id_or_timestamp_breaks_the_signature() -> None:
    fails("no signature .* matches", given=headers(msg_id="msg_other"))
    fails("no signature .* matches", given=headers(timestamp=TS + 1), now=TS + 1)


def test_a_wrong_secret() -> None:
    other = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    fails("no signature .* matches", secret=other)
    fails("no signature .* matches", secret="whsec_" + base64.b64encode(b"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx").decode())


@pytest.mark.parametrize("offset", [301, -301, 3600, -86400])
def test_a_timestamp_more_than_300_s_off(offset: int) -> None:
    # properly signed with its own timestamp: only the clock refuses it
    stale = headers(signed(SECRET, MSG_ID, TS + offset, BODY), timestamp=TS + offset)
    error = fails("too old" if offset < 0 else "from the future", given=stale)
    assert f"{abs(offset)} s" in str(error) and "tolerance 300 s" in str(error)


@pytest.mark.parametrize("offset", [300, -300, 0, 299])
def test_a_timestamp_up_to_300_s_off_passes(offset: int) -> None:
    given = headers(signed(SECRET, MSG_ID, TS + offset, BODY), timestamp=TS + offset)
    assert Webhooks(SECRET).verify(BODY, given, now=TS) == {"test": 2432232314}


def test_the_tolerance_can_be_changed() -> None:
    assert Webhooks(SECRET).verify(BODY, headers(), now=TS + 3600, tolerance=3600) == {"test": 2432232314}
    assert Webhooks(SECRET).verify(BODY, headers(), now=TS + 3600, tolerance=timedelta(hours=1)) == {"test": 2432232314}
    fails("tolerance 10 s", now=TS + 11, tolerance=10)
    fails("tolerance must be", tolerance=-1)


def test_the_clock_is_the_default_now() -> None:
    fails("too old", now=None)  # the vector is from 2021
    webhooks = Webhooks(SECRET)
    current = int(time.time())
    body = b'{"type":"webhook.test","timestamp":"2026-11-27T10:00:00.000Z","data":{"webhook_id":3}}'
    event = webhooks.verify(body, headers(webhooks.sign("msg_1", current, body), "msg_1", current))
    assert event == {"type": "webhook.test", "timestamp": "2026-11-27T10:00:00.000Z", "data": {"webhook_id": 3}}


@pytest.mark.parametrize("value", ["16142653300.5", "1614265330.0", "-1614265330", "soon", "0x60366f72", "１６１４２６５３３０"])
def test_a_timestamp_that_is_not_unix_seconds(value: str) -> None:
    fails("not a Unix time", given=headers(timestamp=value))


def test_two_signatures_where_only_the_second_matches() -> None:
    old = signed("whsec_" + base64.b64encode(b"the secret before the rotation").decode(), MSG_ID, TS, BODY)
    assert Webhooks(SECRET).verify(BODY, headers(f"{old} {SIG}"), now=TS) == {"test": 2432232314}
    assert Webhooks(SECRET).verify(BODY, headers(f"{SIG} {old}"), now=TS) == {"test": 2432232314}
    fails("no signature .* matches", given=headers(f"{old} {old}"))


def test_signatures_of_other_versions_are_ignored() -> None:
    digest = SIG.removeprefix("v1,")
    fails("holds no v1 signature", given=headers(f"v2,{digest}"))
    fails("holds no v1 signature", given=headers(f"v1a,{digest} {digest} v1"))
    assert Webhooks(SECRET).verify(BODY, headers(f"v2,{digest} v1,bm90IGl0 {SIG}"), now=TS) == {"test": 2432232314}
    fails("no signature .* matches", given=headers(f"v1,bm90IGl0 v2,{digest}"))


def test_a_signature_that_is_not_base64_matches_nothing_and_breaks_nothing() -> None:
    fails("no signature .* matches", given=headers("v1,***not base64***"))
    fails("no signature .* matches", given=headers("v1,"))
    assert Webhooks(SECRET).verify(BODY, headers(f"v1,%%% {SIG}"), now=TS) == {"test": 2432232314}


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header(missing: str) -> None:
    given = {k: v for k, v in headers().items() if k != missing}
    error = fails(f"the {missing} header is missing", given=given)
    assert isinstance(error, fileshare.FileshareError) and error.status is None
    fails(f"the {missing} header is missing", given={**headers(), missing: "  "})


def test_no_headers_at_all() -> None:
    fails("webhook-id header is missing", given={})


def test_a_signed_body_that_is_not_json_or_not_an_object() -> None:
    for body, match in [(b"not json", "not JSON"), (b"\xff\xfe{", "not JSON"), (b"[1, 2]", "not a JSON object"), (b'"text"', "not a JSON object")]:
        given = headers(signed(SECRET, MSG_ID, TS, body))
        fails(match, body=body, given=given)


def test_a_body_of_another_type() -> None:
    fails("raw bytes or text", body={"test": 2432232314})


@pytest.mark.parametrize("secret", ["", "whsec_", "whsec_not base64!", "whsec_YWJj=extra", None, b"whsec_MfKQ"], ids=["empty", "prefix-only", "not-base64", "bad-padding", "none", "bytes"])
def test_a_secret_that_is_not_one_fails_at_once(secret: Any) -> None:
    with pytest.raises(WebhookVerificationError, match="webhook secret"):
        Webhooks(secret)


def test_the_comparison_takes_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    old = signed("whsec_" + base64.b64encode(b"old").decode(), MSG_ID, TS, BODY)
    Webhooks(SECRET).verify(BODY, headers(f"{SIG} {old}"), now=TS)
    assert len(compared) == 2  # every v1 signature, even after a match
    assert compared[0][0] == base64.b64decode(SIG.removeprefix("v1,"))


# -- the class itself -------------------------------------------------------------------------


def test_the_secret_never_shows() -> None:
    webhooks = Webhooks(SECRET)
    assert SECRET not in repr(webhooks) and "MfKQ" not in repr(webhooks) and "redacted" in repr(webhooks)
    assert not hasattr(webhooks, "__dict__")
    error = fails("no signature", secret="whsec_" + base64.b64encode(b"another key").decode())
    assert "MfKQ" not in str(error) and "another" not in str(error)


def test_the_names_are_exported() -> None:
    for name in ("Webhooks", "WebhookVerificationError"):
        assert name in fileshare.__all__ and hasattr(fileshare, name)
    assert issubclass(fileshare.WebhookVerificationError, fileshare.FileshareError)
    assert not issubclass(fileshare.WebhookVerificationError, (fileshare.BadRequestError, fileshare.ConfigurationError))


def test_a_server_like_message_with_a_random_secret() -> None:
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    event = {
        "type": "file.uploaded",
        "timestamp": "2026-11-27T10:00:00.000Z",
        "data": {"file_id": 7, "filename": "a.txt", "size": 5},
    }
    body = json.dumps(event, separators=(",", ":")).encode()
    at = 1795773600
    given = {"Webhook-Id": "msg_2f3", "Webhook-Timestamp": str(at), "Webhook-Signature": signed(secret, "msg_2f3", at, body), "User-Agent": "Fileshare-Webhooks/1.0.0"}
    assert Webhooks(secret).verify(body, given, now=at + 12) == event
