"""Sends calls with retries over ``urllib.request``."""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, replace
from email.message import Message
from typing import Any, Callable, Literal, Mapping

from .errors import UNEXPECTED_RESPONSE, CosConnectionError, CosError
from .rate_limit import RateLimit, read_rate_limit
from .retry import RetryPolicy, parse_retry_after, retry_delay

#: What the service accepts as an Idempotency-Key: checked before anything is sent.
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")

Method = Literal["GET", "POST", "PUT", "DELETE"]

#: What an error body's code looks like; anything else is not the service's envelope.
_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True)
class ResponseInfo:
    """Reported for every HTTP answer, error answers and answers that are retried included."""

    method: Method
    path: str
    status_code: int
    #: ``X-Request-Id`` of the answer.
    request_id: str | None
    rate_limit: RateLimit | None
    #: 1 for the first attempt of a call.
    attempt: int
    #: The service answered a POST with the stored answer to an earlier attempt carrying the
    #: same ``Idempotency-Key`` (``Idempotent-Replayed: true``).
    idempotent_replayed: bool


@dataclass(frozen=True)
class RetryInfo:
    """Reported before each retry."""

    method: Method
    path: str
    #: The attempt that failed (1 for the first).
    attempt: int
    #: Seconds the client waits before the next attempt.
    delay: float
    error: CosError | CosConnectionError


@dataclass(frozen=True)
class Call:
    method: Method
    #: Already percent-encoded.
    path: str
    query: Mapping[str, str] | None = None
    body: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CallOptions:
    """Per-call overrides (the keyword arguments every client method takes)."""

    idempotency_key: str | None = None
    request_id: str | None = None
    headers: Mapping[str, str] | None = None
    timeout: float | None = None
    max_retries: int | None = None


@dataclass(frozen=True)
class _Received:
    status_code: int
    headers: Message
    text: str
    request_id: str | None
    rate_limit: RateLimit | None
    attempt: int


class _KeepErrorAnswers(urllib.request.HTTPErrorProcessor):
    """Hands every answer back as it is. urllib's own processor raises for non-2xx statuses and
    follows redirects with every header, the API key included, to wherever they point; the API
    never redirects, so a 3xx is reported as an unexpected answer instead."""

    def http_response(self, request: urllib.request.Request, response: Any) -> Any:
        return response

    https_response = http_response


def default_opener() -> urllib.request.OpenerDirector:
    """urllib's usual opener (proxies from the environment, TLS verified) without redirects."""
    return urllib.request.build_opener(_KeepErrorAnswers)


class Transport:
    """Sends calls with retries. All attempts of one call carry the same ``X-Request-Id``, so the
    service's logs show them together, and a POST's attempts the same ``Idempotency-Key``, so the
    service applies it once however many of them reach it."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        policy: RetryPolicy,
        user_agent: str,
        opener: urllib.request.OpenerDirector,
        on_response: Callable[[ResponseInfo], None] | None,
        on_retry: Callable[[RetryInfo], None] | None,
        sleep: Callable[[float], None],
        random: Callable[[], float],
        clock: Callable[[], float],
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self.policy = policy
        self.user_agent = user_agent
        self.opener = opener
        self.on_response = on_response
        self.on_retry = on_retry
        self.sleep = sleep
        self.random = random
        self.clock = clock
        #: From the most recent answer that carried ``X-RateLimit-*`` headers (live keys).
        self.last_rate_limit: RateLimit | None = None

    def send(self, call: Call, options: CallOptions) -> Any:
        policy = self.policy if options.max_retries is None else replace(self.policy, max_retries=options.max_retries)
        request_id = options.request_id or str(uuid.uuid4())
        idempotency_key = (options.idempotency_key or str(uuid.uuid4())) if call.method == "POST" else None
        if idempotency_key is not None and not _IDEMPOTENCY_KEY.fullmatch(idempotency_key):
            raise ValueError(f"idempotency_key must be 1 to 255 visible ASCII characters without spaces, not {idempotency_key!r}")
        # Serialized once: every attempt sends the same bytes, which is what the service compares
        # an Idempotency-Key's requests by. NaN and infinities are refused here, as JSON has none.
        data = None if call.body is None else json.dumps(call.body, allow_nan=False, separators=(",", ":")).encode("utf-8")
        started = self.clock()
        attempt = 1
        while True:
            try:
                return _success_body(self._attempt(call, data, attempt, request_id, idempotency_key, options))
            except (CosError, CosConnectionError) as failure:
                delay = retry_delay(failure, attempt, policy, self.random, self.clock() - started)
                if delay is None:
                    raise
                if self.on_retry is not None:
                    self.on_retry(RetryInfo(method=call.method, path=call.path, attempt=attempt, delay=delay, error=failure))
                self.sleep(delay)
                attempt += 1

    def _attempt(
        self,
        call: Call,
        data: bytes | None,
        attempt: int,
        request_id: str,
        idempotency_key: str | None,
        options: CallOptions,
    ) -> _Received:
        """One HTTP exchange; returns a success, raises CosError or CosConnectionError otherwise."""
        timeout = self.timeout if options.timeout is None else options.timeout
        request = urllib.request.Request(self._url(call), data=data, method=call.method)
        for name, value in self._headers(call, request_id, idempotency_key, options).items():
            request.add_header(name, value)
        try:
            try:
                response = self.opener.open(request, timeout=timeout)
            except urllib.error.HTTPError as answer:
                # An opener of the caller's that raises for error statuses: the error is the answer.
                response = answer
            with response:
                status = int(response.getcode() or 0)
                headers: Message = response.headers
                raw: bytes = response.read()
        except (urllib.error.URLError, http.client.HTTPException, OSError) as cause:
            raise self._connection_error(cause, timeout, attempt) from cause
        answer_id = headers.get("x-request-id")
        received = _Received(
            status_code=status,
            headers=headers,
            text=raw.decode("utf-8", errors="replace"),
            request_id=answer_id or request_id,
            rate_limit=read_rate_limit(headers),
            attempt=attempt,
        )
        if received.rate_limit is not None:
            self.last_rate_limit = received.rate_limit
        if self.on_response is not None:
            self.on_response(
                ResponseInfo(
                    method=call.method,
                    path=call.path,
                    status_code=status,
                    request_id=answer_id,
                    rate_limit=received.rate_limit,
                    attempt=attempt,
                    idempotent_replayed=(headers.get("idempotent-replayed") or "").strip().lower() == "true",
                )
            )
        if not 200 <= status < 300:
            raise _error_from_response(received)
        return received

    def _url(self, call: Call) -> str:
        query = urllib.parse.urlencode(call.query) if call.query else ""
        return f"{self.base_url}{call.path}{'?' + query if query else ''}"

    def _headers(self, call: Call, request_id: str, idempotency_key: str | None, options: CallOptions) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": self.user_agent,
            "X-Request-Id": request_id,
        }
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        # urllib keys headers case-insensitively (str.capitalize), so the caller's win.
        headers.update(options.headers or {})
        return headers

    def _connection_error(self, cause: BaseException, timeout: float, attempt: int) -> CosConnectionError:
        reason = cause.reason if isinstance(cause, urllib.error.URLError) else cause
        timed_out = isinstance(reason, TimeoutError)
        if timed_out:
            message = f"No answer from {self.base_url} within {timeout:g} s"
        else:
            # A bare reason ("Connection refused") says less than its type (ConnectionRefusedError).
            what = f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) else str(reason)
            message = f"Could not reach {self.base_url}: {what}"
        return CosConnectionError(message, timed_out=timed_out, attempts=attempt)


def _parse_json(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def _error_body(value: Any) -> dict[str, Any] | None:
    """The service's error envelope's ``error`` object, or ``None`` when the body is something else."""
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    if not isinstance(error, dict):
        return None
    code, message = error.get("code"), error.get("message")
    if not isinstance(code, str) or not _CODE.match(code) or not isinstance(message, str):
        return None
    return error


def _error_from_response(received: _Received) -> CosError:
    """The service's error envelope as a CosError (its code kept, known or not); anything else as
    UNEXPECTED_RESPONSE."""
    ok, value = _parse_json(received.text)
    body = _error_body(value) if ok else None
    details = body.get("details") if body is not None else None
    details = details if isinstance(details, dict) else None
    retry_after: float | None = parse_retry_after(received.headers.get("retry-after"))
    if retry_after is None and details is not None:
        asked = details.get("retryAfter")
        retry_after = asked if isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked >= 0 else None
    trace_id = body.get("traceId") if body is not None else None
    doc_url = body.get("docUrl") if body is not None else None
    return CosError(
        code=body["code"] if body is not None else UNEXPECTED_RESPONSE,
        message=body["message"] if body is not None else f"Unexpected HTTP {received.status_code} answer from the service",
        status_code=received.status_code,
        details=details,
        request_id=received.request_id,
        trace_id=trace_id if isinstance(trace_id, str) else received.headers.get("x-request-id"),
        doc_url=doc_url if isinstance(doc_url, str) else None,
        retry_after=retry_after,
        rate_limit=received.rate_limit,
        attempts=received.attempt,
    )


def _success_body(received: _Received) -> Any:
    """A success's JSON body (``None`` for 204). The types are the service's contract; the body is
    not validated again here."""
    if received.status_code == 204 or received.text == "":
        return None
    ok, value = _parse_json(received.text)
    if ok:
        return value
    raise CosError(
        code=UNEXPECTED_RESPONSE,
        message=f"HTTP {received.status_code} answer from the service is not JSON",
        status_code=received.status_code,
        request_id=received.request_id,
        trace_id=received.headers.get("x-request-id"),
        rate_limit=received.rate_limit,
        attempts=received.attempt,
    )
