"""The retry rules as pure functions: which failures are retried, and after how long."""

from __future__ import annotations

import random
import unittest
from email.utils import parsedate_to_datetime

from support import highest

from cos_sdk import DEFAULT_RETRY_POLICY, CosConnectionError, CosError, RetryPolicy
from cos_sdk.retry import backoff, parse_retry_after, retry_delay

POLICY = RetryPolicy(max_retries=5, base_delay=0.1, max_delay=1.0, max_retry_after=60.0, budget=30.0)


def failure(status: int, code: str, retry_after: float | None = None) -> CosError:
    return CosError(code=code, message="m", status_code=status, retry_after=retry_after)


def connection_failure(timed_out: bool) -> CosConnectionError:
    return CosConnectionError("m", timed_out=timed_out)


def zero() -> float:
    return 0.0


class BackoffTest(unittest.TestCase):
    def test_full_jitter_up_to_a_ceiling_that_doubles_per_retry_and_stops_at_max_delay(self) -> None:
        self.assertEqual([backoff(retry, POLICY, zero) for retry in range(1, 7)], [0.0] * 6)
        for got, ceiling in zip([backoff(retry, POLICY, highest) for retry in range(1, 7)], [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]):
            self.assertAlmostEqual(got, ceiling * 0.999999)
        self.assertAlmostEqual(backoff(3, POLICY, lambda: 0.5), 0.2)


class RetryDelayTest(unittest.TestCase):
    def test_429_waits_retry_after_plus_the_jittered_backoff(self) -> None:
        self.assertEqual(retry_delay(failure(429, "RATE_LIMIT_EXCEEDED", 1), 1, POLICY, zero), 1.0)
        self.assertAlmostEqual(retry_delay(failure(429, "RATE_LIMIT_EXCEEDED", 1), 1, POLICY, highest) or 0, 1.0999999)
        self.assertAlmostEqual(retry_delay(failure(429, "RATE_LIMIT_EXCEEDED", 7), 4, POLICY, highest) or 0, 7.7999992)
        # Clients refused in the same instant come back spread over the backoff, none before Retry-After.
        waits = [retry_delay(failure(429, "RATE_LIMIT_EXCEEDED", 1), 2, POLICY, random.random) or 0 for _ in range(50)]
        self.assertGreaterEqual(min(waits), 1.0)
        self.assertGreater(len(set(waits)), 10)

    def test_429_with_a_longer_retry_after_than_max_retry_after_is_handed_back_at_once(self) -> None:
        self.assertIsNone(retry_delay(failure(429, "RATE_LIMIT_EXCEEDED", 86_400), 1, POLICY, highest))

    def test_429_without_retry_after_backs_off(self) -> None:
        self.assertAlmostEqual(retry_delay(failure(429, "UNEXPECTED_RESPONSE"), 2, POLICY, highest) or 0, 0.1999998)

    def test_unavailable_and_no_answer_back_off_never_sooner_than_retry_after(self) -> None:
        self.assertEqual(retry_delay(failure(503, "SERVICE_UNAVAILABLE", 1), 1, POLICY, highest), 1.0)
        self.assertAlmostEqual(retry_delay(failure(503, "SERVICE_UNAVAILABLE"), 1, POLICY, highest) or 0, 0.0999999)
        self.assertAlmostEqual(retry_delay(failure(502, "UNEXPECTED_RESPONSE"), 2, POLICY, highest) or 0, 0.1999998)
        self.assertAlmostEqual(retry_delay(failure(504, "UNEXPECTED_RESPONSE"), 3, POLICY, highest) or 0, 0.3999996)
        self.assertAlmostEqual(retry_delay(connection_failure(False), 1, POLICY, highest) or 0, 0.0999999)
        self.assertAlmostEqual(retry_delay(connection_failure(True), 1, POLICY, highest) or 0, 0.0999999)

    def test_a_key_still_in_flight_is_waited_for_like_an_unavailable_service(self) -> None:
        in_use = failure(409, "IDEMPOTENCY_KEY_IN_USE")
        self.assertAlmostEqual(retry_delay(in_use, 1, POLICY, highest) or 0, 0.0999999)
        self.assertEqual(retry_delay(failure(409, "IDEMPOTENCY_KEY_IN_USE", 2), 1, POLICY, highest), 2.0)
        self.assertIsNone(retry_delay(in_use, 2, POLICY, highest, 29.9))

    def test_never_retries_other_4xx_nor_500(self) -> None:
        final = [
            (400, "VALIDATION_ERROR"),
            (400, "INVALID_JSON"),
            (401, "UNAUTHORIZED"),
            (403, "FORBIDDEN"),
            (404, "USER_NOT_FOUND"),
            (405, "METHOD_NOT_ALLOWED"),
            (409, "OUTCOME_CONFLICT"),
            (409, "IDEMPOTENCY_KEY_REUSED"),
            (410, "OUTCOME_WINDOW_CLOSED"),
            (413, "PAYLOAD_TOO_LARGE"),
            (415, "UNSUPPORTED_MEDIA_TYPE"),
            (500, "INTERNAL_ERROR"),
        ]
        for status, code in final:
            with self.subTest(code=code):
                self.assertIsNone(retry_delay(failure(status, code), 1, POLICY, highest))

    def test_stops_after_max_retries(self) -> None:
        self.assertIsNotNone(retry_delay(failure(503, "SERVICE_UNAVAILABLE"), 5, POLICY, highest))
        self.assertIsNone(retry_delay(failure(503, "SERVICE_UNAVAILABLE"), 6, POLICY, highest))
        self.assertIsNone(retry_delay(connection_failure(True), 6, POLICY, highest))

    def test_keeps_retrying_an_unavailable_service_within_the_budget_then_stops(self) -> None:
        self.assertEqual(retry_delay(failure(503, "SERVICE_UNAVAILABLE", 1), 2, POLICY, highest, 28.0), 1.0)
        self.assertIsNone(retry_delay(failure(503, "SERVICE_UNAVAILABLE", 1), 2, POLICY, highest, 29.5))
        self.assertIsNone(retry_delay(connection_failure(False), 2, POLICY, highest, 29.9))

    def test_the_defaults_bridge_a_redis_restart(self) -> None:
        self.assertEqual(DEFAULT_RETRY_POLICY, RetryPolicy(10, 0.5, 8.0, 60.0, 30.0))


class ParseRetryAfterTest(unittest.TestCase):
    def test_reads_delay_seconds_and_http_dates_and_nothing_else(self) -> None:
        now = parsedate_to_datetime("Sun, 22 Nov 2026 10:00:00 GMT").timestamp()
        self.assertEqual(parse_retry_after("1", now), 1)
        self.assertEqual(parse_retry_after(" 120 ", now), 120)
        self.assertEqual(parse_retry_after("Sun, 22 Nov 2026 10:00:30 GMT", now), 30)
        self.assertEqual(parse_retry_after("Sun, 22 Nov 2026 09:00:00 GMT", now), 0)
        self.assertIsNone(parse_retry_after(None, now))
        self.assertIsNone(parse_retry_after("", now))
        self.assertIsNone(parse_retry_after("soon", now))
        self.assertIsNone(parse_retry_after("-1", now))


if __name__ == "__main__":
    unittest.main()
