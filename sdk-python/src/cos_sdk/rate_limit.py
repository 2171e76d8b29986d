"""A live key's rate-limit state, from the ``X-RateLimit-*`` headers of a response."""

from __future__ import annotations

import math
from dataclasses import dataclass
from email.message import Message


@dataclass(frozen=True)
class RateLimit:
    #: Requests allowed per second (on a monthly refusal: the monthly quota).
    limit: int
    #: Requests left in the current window.
    remaining: int
    #: Unix epoch seconds when the window resets.
    reset: int


def read_rate_limit(headers: Message) -> RateLimit | None:
    """The state from a response's headers; ``None`` for test keys, whose answers carry none."""
    values = [headers.get(name) for name in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")]
    numbers: list[int] = []
    for value in values:
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        numbers.append(int(number))
    return RateLimit(limit=numbers[0], remaining=numbers[1], reset=numbers[2])
