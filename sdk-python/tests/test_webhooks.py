"""``verify_webhook`` against signatures of the reference library ``standardwebhooks`` (npm).

The cases are in ``fixtures/webhook_cases.json``, written by ``fixtures/webhook-cases.mjs`` with
the reference library (``node sdk-python/tests/fixtures/webhook-cases.mjs``): fixed inputs, so
the file is reproducible, and the TypeScript suite fails when it is not what the script writes.
These tests need no Node.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import unittest
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NotRequired, TypedDict

from support import SRC  # noqa: F401  (puts the package on the path)

from cos_sdk import (
    DEFAULT_WEBHOOK_TOLERANCE,
    WEBHOOK_EVENT_TYPES,
    WebhookEvent,
    WebhookVerificationError,
    verify_webhook,
)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "webhook_cases.json")


class Expected(TypedDict, total=False):
    event: WebhookEvent
    reason: str


class Reference(TypedDict):
    signatureVerified: bool
    error: NotRequired[str]


class Case(TypedDict):
    name: str
    secret: str
    headers: dict[str, str]
    payload: str
    now: int
    tolerance: NotRequired[float]
    expected: Expected
    reference: Reference | None


def load_cases() -> list[Case]:
    with open(FIXTURES, encoding="utf-8") as file:
        cases: list[Case] = json.load(file)
    return cases


CASES = load_cases()


def case(name: str) -> Case:
    return next(entry for entry in CASES if entry["name"] == name)


def at(entry: Case) -> datetime:
    return datetime.fromtimestamp(entry["now"], timezone.utc)


def verdict(entry: Case, payload: bytes | str | None = None) -> str:
    """The reason ``verify_webhook`` refuses a case with, or ``accepted`` (checking the event then)."""
    try:
        event = verify_webhook(
            entry["payload"].encode() if payload is None else payload,
            entry["headers"],
            entry["secret"],
            tolerance=entry.get("tolerance", DEFAULT_WEBHOOK_TOLERANCE),
            now=at(entry),
        )
    except WebhookVerificationError as error:
        return error.reason
    assert event == entry["expected"].get("event"), f"{entry['name']}: {event!r}"
    return "accepted"


class FixtureCasesTest(unittest.TestCase):
    def test_every_case_gets_its_expected_verdict(self) -> None:
        for entry in CASES:
            with self.subTest(entry["name"]):
                self.assertEqual(verdict(entry), entry["expected"].get("reason", "accepted"))

    def test_a_str_payload_is_its_utf8_bytes(self) -> None:
        for name in ("non-ASCII body (UTF-8)", "tampered body: another account"):
            with self.subTest(name):
                entry = case(name)
                self.assertEqual(verdict(entry, entry["payload"]), entry["expected"].get("reason", "accepted"))

    def test_agrees_with_the_reference_library_on_headers_timestamp_and_signature(self) -> None:
        compared = [entry for entry in CASES if entry["reference"] is not None]
        self.assertGreater(len(compared), 20)
        for entry in compared:
            with self.subTest(entry["name"]):
                reference = entry["reference"]
                assert reference is not None
                # The reference library checks no envelope: a signed body that is not one passes it.
                signature_verified = entry["expected"].get("reason", "INVALID_PAYLOAD") == "INVALID_PAYLOAD"
                self.assertEqual(signature_verified, reference["signatureVerified"])

    def test_the_cases_cover_rotation_tampering_secrets_timestamps_and_every_event_type(self) -> None:
        names = "\n".join(entry["name"] for entry in CASES)
        for topic in ("rotation", "tampered", "wrong secret", "stale", "future", "missing", "not JSON", "serialized again"):
            self.assertIn(topic, names)
        for event_type in WEBHOOK_EVENT_TYPES:
            self.assertIn(f"{event_type}, one signature", names)


class VerifyWebhookTest(unittest.TestCase):
    def test_returns_the_typed_envelope(self) -> None:
        entry = case("key.rotated, one signature")
        event = verify_webhook(entry["payload"].encode(), entry["headers"], entry["secret"], now=at(entry))
        self.assertEqual(event["type"], "key.rotated")
        self.assertIn(event["environment"], ("test", "live"))
        self.assertEqual(event["data"], json.loads(entry["payload"])["data"])

    def test_uses_the_clock_by_default(self) -> None:
        # The fixtures are signed on 2026-01-01: long past for the real clock.
        entry = case("pattern.opened, one signature")
        with self.assertRaises(WebhookVerificationError) as raised:
            verify_webhook(entry["payload"].encode(), entry["headers"], entry["secret"])
        self.assertEqual(raised.exception.reason, "TIMESTAMP_TOO_OLD")

    def test_names_the_missing_header(self) -> None:
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            with self.subTest(name):
                entry = case(f"{name} missing")
                with self.assertRaises(WebhookVerificationError) as raised:
                    verify_webhook(entry["payload"].encode(), entry["headers"], entry["secret"], now=at(entry))
                self.assertEqual((raised.exception.reason, raised.exception.header), ("MISSING_HEADER", name))

    def test_reads_a_wsgi_environ(self) -> None:
        entry = case("rotation: two signatures, verified with the old secret")
        environ = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in entry["headers"].items()}
        environ["REQUEST_METHOD"] = "POST"
        event = verify_webhook(entry["payload"].encode(), environ, entry["secret"], now=at(entry))
        self.assertEqual(event, entry["expected"].get("event"))

    def test_refuses_the_receivers_mistakes_without_showing_the_secret(self) -> None:
        entry = case("pattern.opened, one signature")
        body, headers, secret = entry["payload"].encode(), entry["headers"], entry["secret"]
        for bad_secret in (secret + "!", "whsec_", "whsec_not base64"):
            with self.subTest(bad_secret), self.assertRaises(ValueError) as raised:
                verify_webhook(body, headers, bad_secret, now=at(entry))
            self.assertNotIn(secret.removeprefix("whsec_"), str(raised.exception))
        with self.assertRaises(ValueError):
            verify_webhook(body, headers, secret, tolerance=-1, now=at(entry))
        with self.assertRaises(ValueError):
            verify_webhook(body, headers, secret, now=datetime(2026, 1, 1))  # naive
        with self.assertRaises(TypeError):
            verify_webhook(json.loads(body), headers, secret, now=at(entry))


class ReceiverTest(unittest.TestCase):
    """Through ``http.server``: its ``self.headers`` and the raw body, as the README's receiver reads them."""

    def test_an_http_server_handler_verifies_deliveries(self) -> None:
        verdicts: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                entry = CASES[int(self.path.lstrip("/"))]
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    verify_webhook(body, self.headers, entry["secret"], now=at(entry))
                    verdicts.append("accepted")
                    self.send_response(204)
                except WebhookVerificationError as error:
                    verdicts.append(error.reason)
                    self.send_response(400)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        try:
            names = ["header names in any case", "rotation: two signatures, verified with the new secret", "wrong secret"]
            for name in names:
                entry = case(name)
                host, port = server.server_address[:2]
                connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
                path = f"/{CASES.index(entry)}"
                connection.request("POST", path, body=entry["payload"].encode(), headers=entry["headers"])
                status = connection.getresponse().status
                connection.close()
                self.assertEqual(status, 400 if "reason" in entry["expected"] else 204, name)
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual(verdicts, ["accepted", "accepted", "NO_MATCHING_SIGNATURE"])


if __name__ == "__main__":
    unittest.main()
