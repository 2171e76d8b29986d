"""The two exceptions a call raises: the service's refusal, or no answer at all."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from .rate_limit import RateLimit

#: Every error code the service answers with, by HTTP status. A code missing here (a newer
#: service) still reaches the caller as the service sent it.
ERROR_CODES: dict[str, int] = {
    "INVALID_USER_ID": 400,
    "INVALID_REQUEST_ID": 400,
    "INVALID_JSON": 400,
    "VALIDATION_ERROR": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "ACCOUNT_RESTRICTED": 403,
    "NOT_FOUND": 404,
    "REQUEST_NOT_FOUND": 404,
    "USER_NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "REQUEST_TIMEOUT": 408,
    "OUTCOME_CONFLICT": 409,
    "IDEMPOTENCY_KEY_REUSED": 409,
    "IDEMPOTENCY_KEY_IN_USE": 409,
    "OUTCOME_WINDOW_CLOSED": 410,
    "PAYLOAD_TOO_LARGE": 413,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "RATE_LIMIT_EXCEEDED": 429,
    "HEADERS_TOO_LARGE": 431,
    "INTERNAL_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
}

#: The answer was not the service's JSON (for example an HTML error page from a proxy in front
#: of it); ``status_code`` is still the answer's status.
UNEXPECTED_RESPONSE = "UNEXPECTED_RESPONSE"


class FieldError(TypedDict):
    field: str
    message: str
    #: The allowed values, for fields with a fixed value set.
    allowed: NotRequired[list[str]]


class CosError(Exception):
    """The service answered with an error (after any retries).

    ``details`` is the error body's ``details`` object as sent: ``fields`` on 400s,
    ``{limit, window, retryAfter, scope}`` on 429, ``requiredScope`` on 403 ``FORBIDDEN``,
    ``{issuedAt, windowSeconds}`` on 410, and whatever a newer service adds.
    """

    def __init__(
        self,
        *,
        code: str,
        message: str,
        status_code: int,
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
        trace_id: str | None = None,
        doc_url: str | None = None,
        retry_after: float | None = None,
        rate_limit: RateLimit | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        #: The service's error code, kept as sent when this version does not know it.
        self.code = code
        self.message = message
        self.status_code = status_code
        self.details = details
        #: The answer's ``X-Request-Id`` (else the one the client sent): the service's logs have it.
        self.request_id = request_id
        #: The error body's ``traceId``, else the answer's ``X-Request-Id``.
        self.trace_id = trace_id
        #: The error body's ``docUrl``: where this code is explained.
        self.doc_url = doc_url
        #: Seconds the service asked to wait (``Retry-After``, else the 429 body's ``details.retryAfter``).
        self.retry_after = retry_after
        #: The key's rate-limit state (live keys).
        self.rate_limit = rate_limit
        #: HTTP attempts made, retries included.
        self.attempts = attempts

    @property
    def fields(self) -> list[FieldError]:
        """``details.fields`` of a 400: each bad field with its message (empty when there are none)."""
        fields = (self.details or {}).get("fields")
        return list(fields) if isinstance(fields, list) else []

    def __str__(self) -> str:
        return f"{self.code} ({self.status_code}): {self.message}"

    def __repr__(self) -> str:
        return f"CosError(code={self.code!r}, status_code={self.status_code}, message={self.message!r}, request_id={self.request_id!r})"


class CosConnectionError(Exception):
    """No answer from the service: the connection failed or an attempt timed out (after any retries).

    The last low-level exception is its ``__cause__``.
    """

    def __init__(self, message: str, *, timed_out: bool, attempts: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.timed_out = timed_out
        self.attempts = attempts
