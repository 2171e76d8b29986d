"""A client for the Context and Outcome Service's /v1 API."""

from __future__ import annotations

import random as _random
import time
import urllib.parse
import urllib.request
from typing import Callable, Iterator, Mapping, cast

from ._version import __version__
from .models import (
    ContextRequest,
    ContextResponse,
    OutcomeRequest,
    OutcomeResponse,
    Profile,
    ProfileUpdate,
    ProfileVersion,
    VersionPage,
)
from .rate_limit import RateLimit
from .retry import DEFAULT_RETRY_POLICY, RetryPolicy
from .transport import Call, CallOptions, ResponseInfo, RetryInfo, Transport, default_opener

DEFAULT_BASE_URL = "http://localhost:3000"
#: Seconds each attempt may wait on the connection (to connect, and for each read of the answer).
DEFAULT_TIMEOUT = 10.0


class CosClient:
    """A client for the Context and Outcome Service's /v1 API.

    Every method takes, keyword-only, per-call options: ``request_id`` (the ``X-Request-Id``
    sent on every attempt of the call, a UUID unless given; not the ``requestId`` of a
    decision), ``headers`` (extra request headers), ``timeout`` and ``max_retries``; the POSTs
    (``context``, ``outcome``) also ``idempotency_key`` (a UUID unless given). One client may be
    shared by threads.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRY_POLICY.max_retries,
        retry_budget: float = DEFAULT_RETRY_POLICY.budget,
        retry_base_delay: float = DEFAULT_RETRY_POLICY.base_delay,
        retry_max_delay: float = DEFAULT_RETRY_POLICY.max_delay,
        max_retry_after: float = DEFAULT_RETRY_POLICY.max_retry_after,
        user_agent: str | None = None,
        on_response: Callable[[ResponseInfo], None] | None = None,
        on_retry: Callable[[RetryInfo], None] | None = None,
        opener: urllib.request.OpenerDirector | None = None,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        :param api_key: ``cos_sk_test_…`` or ``cos_sk_live_…``.
        :param base_url: where the service is, without ``/v1``.
        :param timeout: seconds each attempt may wait on the connection.
        :param max_retries: retries after the first attempt; ``0`` turns retries off.
        :param retry_budget: seconds, from a call's first attempt, it keeps retrying an
            unavailable service (503, 502, 504, no answer).
        :param retry_base_delay: ceiling of the first backoff, doubling per retry…
        :param retry_max_delay: …up to this.
        :param max_retry_after: longest ``Retry-After`` of a 429 worth waiting for.
        :param user_agent: your application's name and version, sent before the SDK's own.
        :param on_response: called for every HTTP answer (status, ``X-Request-Id``, rate limit).
        :param on_retry: called before every retry with the failure and the wait.
        :param opener: a ``urllib`` opener (a proxy, a TLS context); default: urllib's usual
            one, without following redirects.
        :param sleep: waits between attempts; ``random``: the jitter's source in [0, 1);
            ``clock``: monotonic seconds, for the budget. Replaceable for tests.
        """
        if not api_key:
            raise ValueError("CosClient: api_key is required")
        if timeout <= 0:
            raise ValueError("CosClient: timeout must be positive")
        if max_retries < 0:
            raise ValueError("CosClient: max_retries must not be negative")
        self.retry_policy = RetryPolicy(
            max_retries=max_retries,
            base_delay=retry_base_delay,
            max_delay=retry_max_delay,
            max_retry_after=max_retry_after,
            budget=retry_budget,
        )
        self._transport = Transport(
            api_key=api_key,
            base_url=base_url.rstrip("/"),
            timeout=timeout,
            policy=self.retry_policy,
            user_agent=" ".join(part for part in (user_agent, f"cos-sdk-python/{__version__}") if part),
            opener=opener if opener is not None else default_opener(),
            on_response=on_response,
            on_retry=on_retry,
            sleep=sleep,
            random=random,
            clock=clock,
        )

    @property
    def last_rate_limit(self) -> RateLimit | None:
        """Rate-limit state from the most recent answer that carried one (live keys only)."""
        return self._transport.last_rate_limit

    def context(
        self,
        request: ContextRequest,
        *,
        idempotency_key: str | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> ContextResponse:
        """POST /v1/context: how to present a task to this user."""
        options = CallOptions(idempotency_key, request_id, headers, timeout, max_retries)
        return cast(ContextResponse, self._transport.send(Call("POST", "/v1/context", body=request), options))

    def outcome(
        self,
        request: OutcomeRequest,
        *,
        idempotency_key: str | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> OutcomeResponse:
        """POST /v1/outcome: what happened; queued and applied once, however often it is posted."""
        options = CallOptions(idempotency_key, request_id, headers, timeout, max_retries)
        return cast(OutcomeResponse, self._transport.send(Call("POST", "/v1/outcome", body=request), options))

    def get_profile(
        self,
        user_id: str,
        *,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> Profile:
        """GET /v1/profile/:userId; CosError ``USER_NOT_FOUND`` when the user has no profile."""
        options = CallOptions(None, request_id, headers, timeout, max_retries)
        return cast(Profile, self._transport.send(Call("GET", profile_path(user_id)), options))

    def update_profile(
        self,
        user_id: str,
        update: ProfileUpdate,
        *,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> Profile:
        """PUT /v1/profile/:userId: pin (a value) or unpin (``None``) dimensions; creates the
        profile if missing."""
        options = CallOptions(None, request_id, headers, timeout, max_retries)
        return cast(Profile, self._transport.send(Call("PUT", profile_path(user_id), body=update), options))

    def delete_profile(
        self,
        user_id: str,
        *,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> None:
        """DELETE /v1/profile/:userId: erases the user's profile, history, decisions and outcomes;
        idempotent."""
        options = CallOptions(None, request_id, headers, timeout, max_retries)
        self._transport.send(Call("DELETE", profile_path(user_id)), options)

    def list_versions(
        self,
        user_id: str,
        limit: int | None = None,
        before: str | int | None = None,
        *,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> VersionPage:
        """GET /v1/profile/:userId/versions: one page of the history, newest first.

        :param limit: 1–100 (the service's default is 20).
        :param before: only versions below this one: ``"v12"`` or ``12``.
        """
        query: dict[str, str] = {}
        if limit is not None:
            query["limit"] = str(limit)
        if before is not None:
            query["before"] = str(before)
        options = CallOptions(None, request_id, headers, timeout, max_retries)
        return cast(VersionPage, self._transport.send(Call("GET", f"{profile_path(user_id)}/versions", query=query), options))

    def iterate_versions(
        self,
        user_id: str,
        page_size: int | None = None,
        *,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> Iterator[ProfileVersion]:
        """Every version of the history, newest first, fetching pages of ``page_size`` as it goes."""
        before: str | None = None
        while True:
            page = self.list_versions(
                user_id, page_size, before, request_id=request_id, headers=headers, timeout=timeout, max_retries=max_retries
            )
            yield from page["data"]
            if not page["hasMore"] or not page["data"]:
                return
            before = page["data"][-1]["profileVersion"]


def profile_path(user_id: str) -> str:
    """``/v1/profile/<user_id>`` with the id as one path segment, whatever it holds.

    ``quote(…, safe="")`` encodes ``/`` and ``%`` but leaves ``.`` alone, and a segment that is
    ``.`` or ``..`` would be taken for a dot segment by anything between the client and the
    service that normalizes paths; ``%2E`` decodes to the same id and is never one.
    """
    return "/v1/profile/" + urllib.parse.quote(user_id, safe="").replace(".", "%2E")
