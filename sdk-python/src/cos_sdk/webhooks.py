"""Verifying the service's webhooks, signed per the Standard Webhooks specification.

``webhook-signature`` holds ``v1,<base64 HMAC-SHA256>`` entries (two during a secret rotation) of
``{webhook-id}.{webhook-timestamp}.{body}``, keyed with the bytes the ``whsec_`` secret encodes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
import time
from datetime import datetime
from email.message import Message
from typing import Any, Literal, Mapping, TypedDict, TypeGuard, get_args

WebhookEventType = Literal[
    "pattern.opened",
    "quota.threshold",
    "key.created",
    "key.rotated",
    "key.revoked",
    "key.deleted",
    "key.rotation_due",
    "account.restricted",
    # Sent only when someone asks for a test delivery.
    "webhook.test",
]
WebhookEnvironment = Literal["test", "live"]

WEBHOOK_EVENT_TYPES: tuple[WebhookEventType, ...] = get_args(WebhookEventType)
WEBHOOK_ENVIRONMENTS: tuple[WebhookEnvironment, ...] = get_args(WebhookEnvironment)

#: Seconds ``webhook-timestamp`` may be from now, either way, by default: 5 minutes.
DEFAULT_WEBHOOK_TOLERANCE = 300.0

WebhookVerificationReason = Literal[
    "MISSING_HEADER",
    "INVALID_TIMESTAMP",
    "TIMESTAMP_TOO_OLD",
    "TIMESTAMP_TOO_NEW",
    "NO_MATCHING_SIGNATURE",
    "INVALID_PAYLOAD",
]


class WebhookEvent(TypedDict):
    """A signed event, as ``verify_webhook`` returns it. Fields a newer service adds stay in the dict."""

    #: One of ``WEBHOOK_EVENT_TYPES``, or a type a newer service sends (skip what you do not know).
    type: str
    #: When the event happened, ISO 8601 UTC.
    timestamp: str
    #: The environment of the keys and data the event is about: test events never reach live endpoints.
    environment: WebhookEnvironment
    account: str
    #: The event's own fields; which ones depends on ``type``.
    data: dict[str, Any]


class WebhookVerificationError(Exception):
    """The request is not a genuine, current event of the service: answer it with a 4xx and drop it.

    ``reason``: ``MISSING_HEADER`` (``header`` names it), ``INVALID_TIMESTAMP`` (not unix
    seconds), ``TIMESTAMP_TOO_OLD`` / ``TIMESTAMP_TOO_NEW`` (more than ``tolerance`` away),
    ``NO_MATCHING_SIGNATURE``, or ``INVALID_PAYLOAD`` (signed, but not the service's JSON envelope).
    """

    def __init__(self, reason: WebhookVerificationReason, message: str, *, header: str | None = None) -> None:
        super().__init__(message)
        self.reason: WebhookVerificationReason = reason
        self.message = message
        self.header = header

    def __repr__(self) -> str:
        return f"WebhookVerificationError(reason={self.reason!r}, message={self.message!r})"


_SECRET_PREFIX = "whsec_"
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_UNIX_SECONDS = re.compile(r"0|[1-9][0-9]{0,14}")


def verify_webhook(
    payload: bytes | str,
    headers: Mapping[str, str] | Message,
    secret: str,
    *,
    tolerance: float = DEFAULT_WEBHOOK_TOLERANCE,
    now: datetime | None = None,
) -> WebhookEvent:
    """The event in a webhook request, once its signature, timestamp and envelope are checked.

    :param payload: the request body exactly as received, never parsed and serialized again.
    :param headers: the request's headers in any case of names: a dict, ``http.server``'s
        ``self.headers``, or a WSGI ``environ`` (``HTTP_WEBHOOK_ID`` …).
    :param secret: the endpoint's signing secret, ``whsec_…``.
    :param tolerance: seconds ``webhook-timestamp`` may be from ``now``, either way.
    :param now: the current time, timezone-aware; default the clock's.
    :raises WebhookVerificationError: the request is refused, with its ``reason``.
    :raises ValueError: ``secret`` is no ``whsec_`` secret, ``tolerance`` is negative or ``now``
        naive: the receiver's mistake, not the request's. ``TypeError``: ``payload`` is not bytes
        or str (a parsed body, say).
    """
    key = _signing_key(secret)
    body = _raw_body(payload)
    if not math.isfinite(tolerance) or tolerance < 0:
        raise ValueError("tolerance must be a number of seconds, 0 or more")
    if now is not None and now.tzinfo is None:
        raise ValueError("now must be timezone-aware (datetime.now(timezone.utc))")

    webhook_id = _required_header(headers, "webhook-id")
    timestamp = _required_header(headers, "webhook-timestamp")
    signatures = _required_header(headers, "webhook-signature")
    _check_timestamp(timestamp, now.timestamp() if now is not None else time.time(), tolerance)

    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    # Entries are ``version,signature``; during a secret rotation there is one per secret.
    if not any(
        version == "v1" and hmac.compare_digest(candidate.encode("utf-8", "replace"), expected)
        for version, _, candidate in (entry.partition(",") for entry in signatures.split(" "))
    ):
        raise WebhookVerificationError("NO_MATCHING_SIGNATURE", "no webhook-signature entry matches this secret and body")

    event = _parse_event(body)
    if event is None:
        raise WebhookVerificationError("INVALID_PAYLOAD", "the signed body is not a JSON event envelope")
    return event


def _signing_key(secret: str) -> bytes:
    if not isinstance(secret, str):
        raise TypeError("secret must be the whsec_… signing secret")
    encoded = secret.removeprefix(_SECRET_PREFIX)
    # The secret itself never goes into a message: it may end up in a log.
    if not encoded or not _BASE64.fullmatch(encoded):
        raise ValueError("secret is not a whsec_ signing secret (whsec_ and base64)")
    return base64.b64decode(encoded)


def _raw_body(payload: bytes | str) -> bytes:
    if isinstance(payload, str):
        return payload.encode("utf-8")
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    # Typically a framework parsed the body first: parsed and serialized again, it no longer matches.
    raise TypeError("payload must be the raw request body (bytes or str), not parsed JSON")


def _required_header(headers: Mapping[str, str] | Message, name: str) -> str:
    cgi_name = "HTTP_" + name.upper().replace("-", "_")
    value = next((v for k, v in headers.items() if k.lower() == name or k == cgi_name), None)
    if not isinstance(value, str) or not value:
        raise WebhookVerificationError("MISSING_HEADER", f"the {name} header is missing", header=name)
    return value


def _check_timestamp(header: str, now: float, tolerance: float) -> None:
    if not _UNIX_SECONDS.fullmatch(header):
        raise WebhookVerificationError("INVALID_TIMESTAMP", "webhook-timestamp is not unix seconds")
    age = math.floor(now) - int(header)
    if age > tolerance:
        raise WebhookVerificationError("TIMESTAMP_TOO_OLD", f"webhook-timestamp is {age} s old")
    if -age > tolerance:
        raise WebhookVerificationError("TIMESTAMP_TOO_NEW", f"webhook-timestamp is {-age} s ahead")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_event(body: bytes) -> WebhookEvent | None:
    try:
        # NaN and Infinity are not JSON, though Python's parser takes them.
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError included
        return None
    return value if _is_event(value) else None


def _is_event(value: Any) -> TypeGuard[WebhookEvent]:
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and isinstance(value.get("timestamp"), str)
        and value.get("environment") in WEBHOOK_ENVIRONMENTS
        and isinstance(value.get("account"), str)
        and isinstance(value.get("data"), dict)
    )
