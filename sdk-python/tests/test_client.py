"""The client against a scripted stub server: what it sends, what it retries, what it raises.

Waits between attempts go to a fake clock (no test sleeps through a backoff); only the timeout
test waits, a fraction of a second.
"""

from __future__ import annotations

import socket
import unittest
import uuid
from typing import Any

from support import FakeTime, Reply, StubServer, error_body, highest

from cos_sdk import CosClient, CosConnectionError, CosError, RateLimit, ResponseInfo, RetryInfo, __version__

API_KEY = "cos_sk_test_" + "a" * 32
PROFILE = {
    "userId": "u",
    "preferredFraming": "purpose",
    "communicationStyle": "warm",
    "complexityPreference": "whole",
    "encouragementLevel": "minimal",
    "pinned": ["preferredFraming"],
    "profilePhase": "learning",
    "interactionCount": 1,
    "lastUpdated": "2026-11-22T01:18:02.351Z",
    "profileVersion": "v2",
}


class StubTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.stub = StubServer().__enter__()
        self.addCleanup(self.stub.__exit__)
        self.time = FakeTime()
        self.answers: list[ResponseInfo] = []
        self.retries: list[RetryInfo] = []

    def client(self, **options: Any) -> CosClient:
        settings: dict[str, Any] = {
            "sleep": self.time.sleep,
            "clock": self.time.clock,
            "random": highest,
            "on_response": self.answers.append,
            "on_retry": self.retries.append,
            **options,
        }
        return CosClient(API_KEY, settings.pop("base_url", self.stub.base_url), **settings)

    def assert_one_attempt_id(self) -> None:
        """Every attempt carried the same X-Request-Id and, for a POST, the same Idempotency-Key."""
        self.assertEqual(len({r.headers["x-request-id"] for r in self.stub.requests}), 1)
        self.assertEqual(len({r.headers.get("idempotency-key") for r in self.stub.requests}), 1)


class RequestsTest(StubTestCase):
    def test_a_post_carries_the_key_json_a_request_id_and_an_idempotency_key(self) -> None:
        self.stub.reply(200, {"requestId": "req_x", "futureField": 1})
        decision = self.client().context({"userId": "u", "task": "Write", "complexity": "high"})
        self.assertEqual(decision["requestId"], "req_x")
        self.assertEqual(decision["futureField"], 1)  # type: ignore[typeddict-item]  # a newer service's field is kept
        [request] = self.stub.requests
        self.assertEqual((request.method, request.path), ("POST", "/v1/context"))
        self.assertEqual(request.json(), {"userId": "u", "task": "Write", "complexity": "high"})
        self.assertEqual(request.headers["authorization"], f"Bearer {API_KEY}")
        self.assertEqual(request.headers["content-type"], "application/json")
        self.assertEqual(request.headers["accept"], "application/json")
        self.assertEqual(request.headers["user-agent"], f"cos-sdk-python/{__version__}")
        self.assertEqual(uuid.UUID(request.headers["x-request-id"]).version, 4)
        self.assertEqual(uuid.UUID(request.headers["idempotency-key"]).version, 4)

    def test_each_call_gets_its_own_request_id_and_idempotency_key(self) -> None:
        client = self.client()
        client.outcome({"requestId": "req_x", "started": True})
        client.outcome({"requestId": "req_x", "started": True})
        first, second = self.stub.requests
        self.assertNotEqual(first.headers["x-request-id"], second.headers["x-request-id"])
        self.assertNotEqual(first.headers["idempotency-key"], second.headers["idempotency-key"])
        self.assertEqual(first.json(), {"requestId": "req_x", "started": True})

    def test_an_idempotency_key_the_service_would_refuse_is_refused_before_sending(self) -> None:
        for key in ("with space", "x" * 256, "ünï", ""):
            with self.subTest(key=key), self.assertRaises(ValueError):
                self.client().context({"userId": "u", "task": "Write"}, idempotency_key=key or "\t")
        self.assertEqual(self.stub.requests, [])

    def test_gets_puts_and_deletes_carry_no_idempotency_key(self) -> None:
        self.stub.reply(200, PROFILE)
        self.stub.reply(200, PROFILE)
        self.stub.reply(204)
        client = self.client()
        self.assertEqual(client.get_profile("u"), PROFILE)
        self.assertEqual(client.update_profile("u", {"preferredFraming": "purpose", "encouragementLevel": None}), PROFILE)
        client.delete_profile("u")  # 204: nothing to return
        self.assertEqual(
            [(r.method, r.path) for r in self.stub.requests],
            [("GET", "/v1/profile/u"), ("PUT", "/v1/profile/u"), ("DELETE", "/v1/profile/u")],
        )
        self.assertEqual(self.stub.requests[1].json(), {"preferredFraming": "purpose", "encouragementLevel": None})
        self.assertNotIn("content-type", self.stub.requests[0].headers)
        for request in self.stub.requests:
            self.assertNotIn("idempotency-key", request.headers)

    def test_per_call_options(self) -> None:
        client = self.client(user_agent="planner/2.1")
        client.outcome(
            {"requestId": "req_x", "started": True},
            idempotency_key="outcome-42",
            request_id="trace-42",
            headers={"X-Tenant": "t1"},
            timeout=5,
        )
        [request] = self.stub.requests
        self.assertEqual(request.headers["idempotency-key"], "outcome-42")
        self.assertEqual(request.headers["x-request-id"], "trace-42")
        self.assertEqual(request.headers["x-tenant"], "t1")
        self.assertEqual(request.headers["user-agent"], f"planner/2.1 cos-sdk-python/{__version__}")

    def test_user_ids_travel_as_one_path_segment_whatever_they_hold(self) -> None:
        paths = {
            ".": "/v1/profile/%2E",
            "..": "/v1/profile/%2E%2E",
            "a/b": "/v1/profile/a%2Fb",
            "%2E": "/v1/profile/%252E",
            "50%": "/v1/profile/50%25",
            "ünï": "/v1/profile/%C3%BCn%C3%AF",
            "a b?c#d&e=f": "/v1/profile/a%20b%3Fc%23d%26e%3Df",
            "user-1_x~y": "/v1/profile/user-1_x~y",
        }
        client = self.client()
        for user_id in paths:
            client.get_profile(user_id)
        client.list_versions("../x", limit=5)
        self.assertEqual([r.path for r in self.stub.requests], [*paths.values(), "/v1/profile/%2E%2E%2Fx/versions?limit=5"])

    def test_list_versions_and_iterate_versions(self) -> None:
        def version(n: int) -> dict[str, Any]:
            return {"profileVersion": f"v{n}", "cause": "manual", "changed": ["pinned"], "createdAt": "2026-11-22T01:18:02.351Z"}

        self.stub.reply(200, {"data": [version(3)], "hasMore": True})
        self.stub.reply(200, {"data": [version(5), version(4)], "hasMore": True})
        self.stub.reply(200, {"data": [version(3), version(2)], "hasMore": True})
        self.stub.reply(200, {"data": [version(1)], "hasMore": False})
        client = self.client()
        self.assertEqual(client.list_versions("u", limit=1, before=4), {"data": [version(3)], "hasMore": True})
        self.assertEqual([v["profileVersion"] for v in client.iterate_versions("u", page_size=2)], ["v5", "v4", "v3", "v2", "v1"])
        self.assertEqual(
            [r.path for r in self.stub.requests],
            [
                "/v1/profile/u/versions?limit=1&before=4",
                "/v1/profile/u/versions?limit=2",
                "/v1/profile/u/versions?limit=2&before=v4",
                "/v1/profile/u/versions?limit=2&before=v2",
            ],
        )

    def test_base_url_may_end_in_a_slash(self) -> None:
        self.client(base_url=self.stub.base_url + "/").get_profile("u")
        self.assertEqual(self.stub.requests[0].path, "/v1/profile/u")

    def test_rate_limit_headers_are_reported(self) -> None:
        limits = {"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "7", "X-RateLimit-Reset": "1790000000"}
        self.stub.reply(200, PROFILE, {**limits, "X-Request-Id": "rid-1"})
        client = self.client()
        self.assertIsNone(client.last_rate_limit)
        client.get_profile("u")
        self.assertEqual(client.last_rate_limit, RateLimit(10, 7, 1790000000))
        self.assertEqual(self.answers, [ResponseInfo("GET", "/v1/profile/u", 200, "rid-1", RateLimit(10, 7, 1790000000), 1, False)])

    def test_what_json_cannot_hold_is_refused_before_sending(self) -> None:
        with self.assertRaises(ValueError):
            self.client().outcome({"requestId": "req_x", "started": True, "satisfaction": float("nan")})
        self.assertEqual(self.stub.requests, [])

    def test_an_api_key_is_required(self) -> None:
        with self.assertRaises(ValueError):
            CosClient("")


class RetriesTest(StubTestCase):
    def test_429_waits_at_least_retry_after_and_retries_the_same_call(self) -> None:
        limited = error_body("RATE_LIMIT_EXCEEDED", status=429, details={"limit": 10, "window": "1s", "retryAfter": 1, "scope": "second"})
        self.stub.reply(429, limited, {"Retry-After": "1"})
        self.stub.reply(429, limited, {"Retry-After": "1"})
        self.stub.reply(200, {"requestId": "req_x"})
        decision = self.client(random=lambda: 0.5).context({"userId": "u", "task": "t"})
        self.assertEqual(decision["requestId"], "req_x")
        self.assertEqual(self.time.sleeps, [1.25, 1.5])  # Retry-After plus half the backoff ceiling (0.5 s, then 1 s)
        self.assertEqual([(r.attempt, r.delay) for r in self.retries], [(1, 1.25), (2, 1.5)])
        self.assertTrue(all(isinstance(r.error, CosError) and r.error.status_code == 429 for r in self.retries))
        self.assertEqual(len(self.stub.requests), 3)
        self.assert_one_attempt_id()
        self.assertEqual(len({r.body for r in self.stub.requests}), 1)

    def test_429_asking_longer_than_max_retry_after_is_raised_at_once(self) -> None:
        quota = error_body("RATE_LIMIT_EXCEEDED", status=429, details={"scope": "month", "retryAfter": 900_000})
        self.stub.reply(429, quota, {"Retry-After": "900000"})
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u")
        error = raised.exception
        self.assertEqual((error.code, error.retry_after, error.attempts), ("RATE_LIMIT_EXCEEDED", 900_000, 1))
        self.assertEqual(self.time.sleeps, [])

    def test_503_is_retried_honouring_retry_after_until_the_budget_is_spent(self) -> None:
        self.stub.default = Reply(503, error_body("SERVICE_UNAVAILABLE", status=503), {"Retry-After": "1"})
        with self.assertRaises(CosError) as raised:
            self.client().outcome({"requestId": "req_x", "started": True})
        # Waits: the longer of Retry-After (1 s) and a backoff ceiling of 0.5, 1, 2, 4, 8, 8 s…
        expected = [1.0, 1.0, 2.0, 4.0, 8.0, 8.0]
        self.assertEqual(len(self.time.sleeps), len(expected))
        for got, ceiling in zip(self.time.sleeps, expected):
            self.assertAlmostEqual(got, ceiling, delta=0.0001)
        # …stopping before the call would outlast its 30 s.
        self.assertLessEqual(sum(self.time.sleeps), 30)
        self.assertEqual((raised.exception.code, raised.exception.status_code, raised.exception.attempts), ("SERVICE_UNAVAILABLE", 503, 7))
        self.assert_one_attempt_id()

    def test_the_budget_is_configurable(self) -> None:
        self.stub.default = Reply(503, error_body("SERVICE_UNAVAILABLE", status=503), {"Retry-After": "1"})
        with self.assertRaises(CosError) as raised:
            self.client(retry_budget=2.5).get_profile("u")
        self.assertEqual(raised.exception.attempts, 3)
        self.assertEqual(self.time.sleeps, [1.0, 1.0])

    def test_max_retries_bounds_the_retries_also_per_call(self) -> None:
        self.stub.default = Reply(503, error_body("SERVICE_UNAVAILABLE", status=503))
        with self.assertRaises(CosError) as raised:
            self.client(max_retries=2).get_profile("u")
        self.assertEqual(raised.exception.attempts, 3)
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u", max_retries=0)
        self.assertEqual(raised.exception.attempts, 1)

    def test_a_key_in_flight_is_retried_and_the_replay_is_reported(self) -> None:
        self.stub.reply(409, error_body("IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is in progress", 409))
        self.stub.reply(202, {"success": True, "message": "Outcome accepted"}, {"Idempotent-Replayed": "true"})
        answer = self.client().outcome({"requestId": "req_x", "started": True})
        self.assertEqual(answer, {"success": True, "message": "Outcome accepted"})
        self.assertEqual([(a.status_code, a.idempotent_replayed) for a in self.answers], [(409, False), (202, True)])
        self.assert_one_attempt_id()

    def test_a_key_reused_with_another_body_is_not_retried(self) -> None:
        message = "This Idempotency-Key was used with another body"
        self.stub.reply(409, error_body("IDEMPOTENCY_KEY_REUSED", message, 409, details={"hint": "new key"}))
        with self.assertRaises(CosError) as raised:
            self.client().context({"userId": "u", "task": "t"}, idempotency_key="k1")
        error = raised.exception
        self.assertEqual((error.code, error.status_code, error.message), ("IDEMPOTENCY_KEY_REUSED", 409, message))
        self.assertEqual((error.details, error.attempts), ({"hint": "new key"}, 1))
        self.assertEqual(len(self.stub.requests), 1)

    def test_other_4xx_and_500_are_final(self) -> None:
        final = [
            (400, "VALIDATION_ERROR"),
            (401, "UNAUTHORIZED"),
            (403, "FORBIDDEN"),
            (404, "USER_NOT_FOUND"),
            (409, "OUTCOME_CONFLICT"),
            (410, "OUTCOME_WINDOW_CLOSED"),
            (413, "PAYLOAD_TOO_LARGE"),
            (500, "INTERNAL_ERROR"),
        ]
        for status, code in final:
            with self.subTest(code=code):
                self.stub.requests.clear()
                self.stub.reply(status, error_body(code, status=status))
                with self.assertRaises(CosError) as raised:
                    self.client().get_profile("u")
                self.assertEqual((raised.exception.code, raised.exception.status_code, raised.exception.attempts), (code, status, 1))
                self.assertEqual(len(self.stub.requests), 1)
        self.assertEqual(self.retries, [])

    def test_a_proxy_page_is_an_unexpected_response_retried_when_transient(self) -> None:
        self.stub.default = Reply(502, "<html>Bad gateway</html>", {"Content-Type": "text/html"})
        with self.assertRaises(CosError) as raised:
            self.client(max_retries=1).get_profile("u")
        self.assertEqual((raised.exception.code, raised.exception.status_code, raised.exception.attempts), ("UNEXPECTED_RESPONSE", 502, 2))

    def test_a_success_that_is_not_json_is_an_unexpected_response(self) -> None:
        self.stub.reply(200, "<html>hello</html>", {"Content-Type": "text/html"})
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u")
        self.assertEqual((raised.exception.code, raised.exception.status_code, raised.exception.attempts), ("UNEXPECTED_RESPONSE", 200, 1))

    def test_a_redirect_is_not_followed(self) -> None:
        self.stub.reply(302, "", {"Location": "http://127.0.0.1:9/elsewhere"})
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u")
        self.assertEqual((raised.exception.code, raised.exception.status_code), ("UNEXPECTED_RESPONSE", 302))
        self.assertEqual(len(self.stub.requests), 1)


class ConnectionFailuresTest(StubTestCase):
    def test_a_refused_connection_is_retried_then_raised(self) -> None:
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            port = unused.getsockname()[1]
        with self.assertRaises(CosConnectionError) as raised:
            self.client(base_url=f"http://127.0.0.1:{port}", max_retries=3).get_profile("u")
        self.assertEqual((raised.exception.timed_out, raised.exception.attempts), (False, 4))
        self.assertIn("Could not reach", str(raised.exception))
        self.assertIsNotNone(raised.exception.__cause__)
        self.assertEqual(len(self.time.sleeps), 3)

    def test_a_dropped_connection_is_retried(self) -> None:
        self.stub.reply(drop=True)
        self.stub.reply(200, PROFILE)
        self.assertEqual(self.client().get_profile("u"), PROFILE)
        self.assertEqual(len(self.stub.requests), 2)
        self.assertIsInstance(self.retries[0].error, CosConnectionError)
        self.assert_one_attempt_id()

    def test_an_attempt_without_an_answer_in_time_times_out(self) -> None:
        self.stub.reply(200, PROFILE, delay=1.0)
        with self.assertRaises(CosConnectionError) as raised:
            self.client(timeout=0.2).get_profile("u", max_retries=0)
        self.assertEqual((raised.exception.timed_out, raised.exception.attempts), (True, 1))
        self.assertIn("within 0.2 s", str(raised.exception))


class ErrorsTest(StubTestCase):
    def test_an_error_carries_the_envelope_and_the_exchange(self) -> None:
        body = error_body(
            "VALIDATION_ERROR",
            "Invalid request: task is required",
            400,
            traceId="trace-1",
            docUrl="https://docs.example/errors#VALIDATION_ERROR",
            details={"fields": [{"field": "task", "message": "is required"}]},
        )
        self.stub.reply(400, body, {"X-Request-Id": "rid-9"})
        with self.assertRaises(CosError) as raised:
            self.client().context({"userId": "u", "task": ""})
        error = raised.exception
        self.assertEqual(error.code, "VALIDATION_ERROR")
        self.assertEqual(error.message, "Invalid request: task is required")
        self.assertEqual(error.status_code, 400)
        self.assertEqual(error.trace_id, "trace-1")
        self.assertEqual(error.doc_url, "https://docs.example/errors#VALIDATION_ERROR")
        self.assertEqual(error.request_id, "rid-9")
        self.assertEqual(error.fields, [{"field": "task", "message": "is required"}])
        self.assertEqual(str(error), "VALIDATION_ERROR (400): Invalid request: task is required")

    def test_trace_id_falls_back_to_the_answers_request_id(self) -> None:
        self.stub.reply(404, error_body("USER_NOT_FOUND", status=404), {"X-Request-Id": "rid-7"})
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u")
        self.assertEqual((raised.exception.trace_id, raised.exception.request_id, raised.exception.doc_url), ("rid-7", "rid-7", None))

    def test_without_an_answer_request_id_the_sent_one_identifies_the_exchange(self) -> None:
        self.stub.reply(404, error_body("USER_NOT_FOUND", status=404))
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u", request_id="mine-1")
        self.assertEqual((raised.exception.request_id, raised.exception.trace_id), ("mine-1", None))

    def test_an_unknown_code_is_kept_with_its_message_and_details(self) -> None:
        self.stub.reply(422, error_body("SOMETHING_NEW", "A newer refusal", 422, details={"hint": "h"}))
        with self.assertRaises(CosError) as raised:
            self.client().get_profile("u")
        error = raised.exception
        self.assertEqual((error.code, error.message, error.status_code), ("SOMETHING_NEW", "A newer refusal", 422))
        self.assertEqual((error.details, error.fields), ({"hint": "h"}, []))

    def test_retry_after_comes_from_the_header_else_from_the_429_details(self) -> None:
        limited = error_body("RATE_LIMIT_EXCEEDED", status=429, details={"limit": 10, "window": "1s", "retryAfter": 3, "scope": "second"})
        self.stub.reply(429, limited)
        self.stub.reply(429, limited, {"Retry-After": "1"})
        client = self.client(max_retries=0)
        for expected in (3, 1):
            with self.assertRaises(CosError) as raised:
                client.get_profile("u")
            self.assertEqual(raised.exception.retry_after, expected)
            self.assertEqual(raised.exception.details, limited["error"]["details"])


if __name__ == "__main__":
    unittest.main()
