"""When a failed attempt is tried again, and after how long: the TypeScript SDK's rules."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable

from .errors import CosConnectionError, CosError


@dataclass(frozen=True)
class RetryPolicy:
    """Retry tuning; every duration in seconds."""

    #: Retries after the first attempt.
    max_retries: int = 10
    #: Ceiling of the first backoff; it doubles at every retry.
    base_delay: float = 0.5
    #: Largest backoff ceiling.
    max_delay: float = 8.0
    #: Longest ``Retry-After`` worth waiting for. A longer one (a spent monthly quota is refused
    #: until the 1st) is handed to the caller at once instead of blocking it.
    max_retry_after: float = 60.0
    #: Longest time a call keeps retrying an unavailable service (503, 502, 504, no answer),
    #: counted from its first attempt: long enough to bridge a restart of the service's Redis.
    budget: float = 30.0


DEFAULT_RETRY_POLICY = RetryPolicy()

#: Answers that mean "not now" rather than "not this request": the service or a proxy in front
#: of it is unavailable.
TRANSIENT_STATUSES = frozenset({502, 503, 504})

#: Another attempt of the same call (same ``Idempotency-Key``) is still being handled: once it
#: finishes, this one gets its answer replayed, so it is waited for like an unavailable service.
IN_FLIGHT_CODE = "IDEMPOTENCY_KEY_IN_USE"


def retry_delay(
    failure: CosError | CosConnectionError,
    retry: int,
    policy: RetryPolicy,
    random: Callable[[], float],
    elapsed: float = 0.0,
) -> float | None:
    """Seconds to wait before retry number ``retry`` (1 for the first) after ``failure``, or
    ``None`` when it must not be retried; ``elapsed`` is the time since the call's first attempt.

    Every call is safe to repeat (POSTs carry one ``Idempotency-Key`` across their attempts, and
    the API's operations are idempotent besides), so connection failures and timeouts are
    retried too. Other 4xx answers are final: repeating the same request cannot change them.

    - 429: ``Retry-After`` plus a full-jitter backoff — never sooner than the service asked, and
      clients refused together do not all come back at once; ``None`` when ``Retry-After`` is
      longer than ``max_retry_after``.
    - 503, 502, 504, 409 ``IDEMPOTENCY_KEY_IN_USE``, no answer: the longer of ``Retry-After``
      and the backoff, while the call stays within ``budget``.
    """
    if retry > policy.max_retries:
        return None
    jitter = backoff(retry, policy, random)
    if isinstance(failure, CosError) and failure.status_code == 429:
        asked = failure.retry_after or 0.0
        return asked + jitter if asked <= policy.max_retry_after else None
    if isinstance(failure, CosError) and not is_transient(failure):
        return None
    asked = (failure.retry_after or 0.0) if isinstance(failure, CosError) else 0.0
    wait = max(asked, jitter)
    return wait if elapsed + wait <= policy.budget else None


def is_transient(error: CosError) -> bool:
    return error.status_code in TRANSIENT_STATUSES or (error.status_code == 409 and error.code == IN_FLIGHT_CODE)


def backoff(retry: int, policy: RetryPolicy, random: Callable[[], float]) -> float:
    """Exponential backoff with full jitter: uniform in [0, min(max_delay, base_delay · 2^(retry−1))],
    so clients that failed together do not come back together."""
    ceiling: float = min(policy.max_delay, policy.base_delay * 2.0 ** (retry - 1))
    return random() * ceiling


_DELAY_SECONDS = re.compile(r"^\s*\d+\s*$")


def parse_retry_after(value: str | None, now: float | None = None) -> int | None:
    """Seconds from a ``Retry-After`` header: delay-seconds or an HTTP date (``now``: epoch seconds)."""
    if value is None or value.strip() == "":
        return None
    if _DELAY_SECONDS.match(value):
        return int(value)
    try:
        at = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    current = time.time() if now is None else now
    return max(0, math.ceil(at - current))
