"""The client against the real service: API, worker, Postgres and Redis.

``npm run test:python`` starts them and sets ``COS_BASE_URL``, ``COS_API_KEY`` (a test key) and
``COS_LIVE_API_KEY`` (a live key of a starter account: 10 requests per second); without them
these tests are skipped.
"""

from __future__ import annotations

import os
import threading
import time
import unittest
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

from support import SRC  # noqa: F401  (puts the package on the path)

from cos_sdk import (
    COMMUNICATION_STYLES,
    COMPLEXITY_HANDLING,
    ENCOURAGEMENT_LEVELS,
    FRAMINGS,
    CosClient,
    CosError,
    ProfileUpdate,
    ResponseInfo,
    RetryInfo,
)

BASE_URL = os.environ.get("COS_BASE_URL", "")
API_KEY = os.environ.get("COS_API_KEY", "")
LIVE_API_KEY = os.environ.get("COS_LIVE_API_KEY", "")

T = TypeVar("T")


def eventually(read: Callable[[], T | None], timeout: float = 20.0) -> T:
    """Polls ``read`` until it returns something other than None."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"no value within {timeout} s")
        time.sleep(0.05)


def unique(name: str) -> str:
    return f"py-{name}-{uuid.uuid4().hex[:8]}"


@unittest.skipUnless(BASE_URL and API_KEY, "needs a running service: COS_BASE_URL and COS_API_KEY (npm run test:python)")
class ServiceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.answers: list[ResponseInfo] = []
        self.client = CosClient(API_KEY, BASE_URL, on_response=self.answers.append)

    def test_context_outcome_then_the_profile_has_learned(self) -> None:
        user_id = unique("round-trip")
        decision = self.client.context(
            {"userId": user_id, "task": "Write the quarterly report", "complexity": "high", "taskType": "writing"}
        )
        self.assertTrue(decision["requestId"].startswith("req_"))
        self.assertIn(decision["suggestedFraming"], FRAMINGS)
        self.assertIn(decision["communicationStyle"], COMMUNICATION_STYLES)
        self.assertIn(decision["complexity"], COMPLEXITY_HANDLING)
        self.assertIn(decision["encouragement"], ENCOURAGEMENT_LEVELS)
        self.assertEqual((decision["metadata"]["profilePhase"], decision["metadata"]["interactionCount"]), ("cold_start", 0))

        accepted = self.client.outcome({"requestId": decision["requestId"], "started": True, "completed": True, "satisfaction": 0.8})
        self.assertIs(accepted["success"], True)
        # Posting it again (a new call, a new Idempotency-Key) is a retry of the same outcome: applied once.
        self.client.outcome({"requestId": decision["requestId"], "started": True, "completed": True, "satisfaction": 0.8})

        def learned() -> dict[str, object] | None:
            profile = self.client.get_profile(user_id)
            return dict(profile) if profile["interactionCount"] >= 1 else None

        profile = eventually(learned)
        self.assertEqual((profile["userId"], profile["interactionCount"], profile["profileVersion"]), (user_id, 1, "v1"))
        self.assertEqual(profile["pinned"], [])
        # The service echoes the client's X-Request-Id.
        self.assertTrue(all(answer.request_id for answer in self.answers))

    def test_pin_and_unpin(self) -> None:
        user_id = unique("pins")
        pinned = self.client.update_profile(user_id, {"preferredFraming": "purpose", "encouragementLevel": "moderate"})
        self.assertEqual((pinned["preferredFraming"], pinned["encouragementLevel"]), ("purpose", "moderate"))
        self.assertEqual(sorted(pinned["pinned"]), ["encouragementLevel", "preferredFraming"])
        self.assertEqual(pinned["profileVersion"], "v1")

        unpinned = self.client.update_profile(user_id, {"preferredFraming": None})
        self.assertEqual((unpinned["pinned"], unpinned["profileVersion"]), (["encouragementLevel"], "v2"))
        # Unpinning what is not pinned changes nothing: no new version.
        self.assertEqual(self.client.update_profile(user_id, {"preferredFraming": None})["profileVersion"], "v2")
        self.assertEqual(self.client.get_profile(user_id)["pinned"], ["encouragementLevel"])
        self.client.delete_profile(user_id)

    def test_list_versions_pages_newest_first(self) -> None:
        user_id = unique("versions")
        updates: list[ProfileUpdate] = [
            {"preferredFraming": "purpose"},
            {"communicationStyle": "warm"},
            {"preferredFraming": None},
            {"communicationStyle": None},
        ]
        for update in updates:
            self.client.update_profile(user_id, update)
        first = self.client.list_versions(user_id, limit=2)
        self.assertEqual(([v["profileVersion"] for v in first["data"]], first["hasMore"]), (["v4", "v3"], True))
        second = self.client.list_versions(user_id, limit=2, before=first["data"][-1]["profileVersion"])
        self.assertEqual(([v["profileVersion"] for v in second["data"]], second["hasMore"]), (["v2", "v1"], False))
        self.assertEqual([v["profileVersion"] for v in self.client.list_versions(user_id, before=2)["data"]], ["v1"])
        history = list(self.client.iterate_versions(user_id, page_size=3))
        self.assertEqual([v["profileVersion"] for v in history], ["v4", "v3", "v2", "v1"])
        self.assertEqual({v["cause"] for v in history}, {"manual"})
        self.assertTrue(all("pinned" in v["changed"] for v in history))
        self.client.delete_profile(user_id)

    def test_a_deleted_profile_is_not_found(self) -> None:
        user_id = unique("erased")
        self.client.update_profile(user_id, {"communicationStyle": "direct"})
        self.client.delete_profile(user_id)
        self.client.delete_profile(user_id)  # idempotent
        reads: list[Callable[[str], object]] = [self.client.get_profile, self.client.list_versions]
        for read in reads:
            with self.subTest(read=getattr(read, "__name__", "")):
                with self.assertRaises(CosError) as raised:
                    read(user_id)
                error = raised.exception
                self.assertEqual((error.code, error.status_code, error.attempts), ("USER_NOT_FOUND", 404, 1))

    def test_validation_errors_name_their_fields(self) -> None:
        with self.assertRaises(CosError) as raised:
            self.client.context({"userId": unique("invalid"), "task": ""}, request_id="py-trace-1")
        error = raised.exception
        self.assertEqual((error.code, error.status_code, error.attempts), ("VALIDATION_ERROR", 400, 1))
        self.assertIn("task", [field["field"] for field in error.fields])
        self.assertEqual(error.request_id, "py-trace-1")
        self.assertIsNotNone(error.trace_id)

        with self.assertRaises(CosError) as raised:
            self.client.update_profile(unique("invalid"), {"preferredFraming": "sideways"})  # type: ignore[typeddict-item]
        self.assertEqual(raised.exception.code, "VALIDATION_ERROR")
        self.assertEqual(raised.exception.fields[0]["field"], "preferredFraming")
        self.assertEqual(tuple(raised.exception.fields[0].get("allowed", [])), FRAMINGS)

        with self.assertRaises(CosError) as raised:
            self.client.outcome({"requestId": "not-a-request-id", "started": True})
        self.assertEqual(raised.exception.code, "INVALID_REQUEST_ID")
        self.assertEqual(raised.exception.fields[0]["field"], "requestId")

        with self.assertRaises(CosError) as raised:
            self.client.list_versions(unique("invalid"), limit=0)
        self.assertEqual(raised.exception.code, "VALIDATION_ERROR")

    def test_ids_that_are_not_plain_path_segments_round_trip(self) -> None:
        for user_id in (".", "..", "a/b", "%2E", "50%", "ünï", "a b?c#d"):
            with self.subTest(user_id=user_id):
                self.assertEqual(self.client.update_profile(user_id, {"preferredFraming": "challenge"})["userId"], user_id)
                profile = self.client.get_profile(user_id)
                self.assertEqual((profile["userId"], profile["preferredFraming"]), (user_id, "challenge"))
                self.assertEqual([v["profileVersion"] for v in self.client.list_versions(user_id)["data"]], ["v1"])
                self.client.delete_profile(user_id)
                with self.assertRaises(CosError) as raised:
                    self.client.get_profile(user_id)
                self.assertEqual(raised.exception.code, "USER_NOT_FOUND")

    def test_an_idempotency_key_replays_the_first_answer(self) -> None:
        user_id = unique("idempotent")
        key = str(uuid.uuid4())
        first = self.client.context({"userId": user_id, "task": "Plan the week"}, idempotency_key=key)
        again = self.client.context({"userId": user_id, "task": "Plan the week"}, idempotency_key=key)
        self.assertEqual(again, first)
        self.assertEqual([a.idempotent_replayed for a in self.answers[-2:]], [False, True])
        outcome_key = str(uuid.uuid4())
        signals = {"requestId": first["requestId"], "started": True}
        self.client.outcome(signals, idempotency_key=outcome_key)  # type: ignore[arg-type]
        self.client.outcome(signals, idempotency_key=outcome_key)  # type: ignore[arg-type]
        self.assertTrue(self.answers[-1].idempotent_replayed)

    def test_a_reused_idempotency_key_is_refused_and_not_retried(self) -> None:
        retries: list[RetryInfo] = []
        client = CosClient(API_KEY, BASE_URL, on_retry=retries.append)
        key = str(uuid.uuid4())
        user_id = unique("reused")
        client.context({"userId": user_id, "task": "one"}, idempotency_key=key)
        with self.assertRaises(CosError) as raised:
            client.context({"userId": user_id, "task": "another"}, idempotency_key=key)
        self.assertEqual((raised.exception.code, raised.exception.status_code, raised.exception.attempts), ("IDEMPOTENCY_KEY_REUSED", 409, 1))
        self.assertEqual(retries, [])

    def test_concurrent_calls_with_one_key_make_one_decision(self) -> None:
        key = str(uuid.uuid4())
        request = {"userId": unique("in-flight"), "task": "Tidy the desk"}
        with ThreadPoolExecutor(max_workers=6) as pool:
            decisions = list(pool.map(lambda _: self.client.context(request, idempotency_key=key), range(6)))  # type: ignore[arg-type]
        self.assertEqual(len({d["requestId"] for d in decisions}), 1)

    def test_a_bad_key_is_refused_once(self) -> None:
        retries: list[RetryInfo] = []
        for key in ("cos_sk_test_" + "x" * 40, "not-a-key"):
            with self.subTest(key=key):
                client = CosClient(key, BASE_URL, on_retry=retries.append)
                with self.assertRaises(CosError) as raised:
                    client.get_profile("anyone")
                self.assertEqual((raised.exception.code, raised.exception.status_code, raised.exception.attempts), ("UNAUTHORIZED", 401, 1))
        self.assertEqual(retries, [])

    @unittest.skipUnless(LIVE_API_KEY, "needs COS_LIVE_API_KEY: a live key of a starter account")
    def test_a_live_key_past_its_limit_gets_every_call_through(self) -> None:
        retries: list[RetryInfo] = []
        lock = threading.Lock()

        def on_retry(info: RetryInfo) -> None:
            with lock:
                retries.append(info)

        client = CosClient(LIVE_API_KEY, BASE_URL, on_retry=on_retry)
        user_id = unique("burst")
        calls = 30  # three times the starter plan's 10 per second, from 10 threads at once
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=10) as pool:
            decisions = list(pool.map(lambda i: client.context({"userId": user_id, "task": f"task {i}"}), range(calls)))
        elapsed = time.monotonic() - started
        self.assertEqual(len({d["requestId"] for d in decisions}), calls)
        refusals = [r for r in retries if isinstance(r.error, CosError) and r.error.code == "RATE_LIMIT_EXCEEDED"]
        self.assertGreater(len(refusals), 0)
        self.assertTrue(all(r.delay >= 1 for r in refusals))  # never sooner than Retry-After: 1
        # 30 calls at 10 per second: at least two further windows.
        self.assertGreaterEqual(elapsed, 2.0)
        rate_limit = client.last_rate_limit
        assert rate_limit is not None
        self.assertEqual(rate_limit.limit, 10)


if __name__ == "__main__":
    unittest.main()
