"""Request and response shapes of the service's /v1 API (its docs/API.md).

The package stands alone, so the value sets are written out here. Bodies are plain dicts typed
as ``TypedDict``: their keys are the API's own (camelCase, as in the API reference), and a
field a newer service adds stays in the dict instead of being dropped or refused.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, get_args

Framing = Literal["micro_steps", "time_boxed", "purpose", "challenge", "curiosity"]
CommunicationStyle = Literal["direct", "warm", "structured", "playful"]
ComplexityHandling = Literal["chunked", "scaffolded", "whole"]
EncouragementLevel = Literal["minimal", "moderate", "enthusiastic"]
TaskComplexity = Literal["low", "medium", "high"]
ProfilePhase = Literal["cold_start", "learning", "established"]
VersionCause = Literal["outcome", "manual", "reset"]
PinnableField = Literal["preferredFraming", "communicationStyle", "complexityPreference", "encouragementLevel"]

# The value sets as tuples, in the service's order, for menus and checks.
FRAMINGS: tuple[Framing, ...] = get_args(Framing)
COMMUNICATION_STYLES: tuple[CommunicationStyle, ...] = get_args(CommunicationStyle)
COMPLEXITY_HANDLING: tuple[ComplexityHandling, ...] = get_args(ComplexityHandling)
ENCOURAGEMENT_LEVELS: tuple[EncouragementLevel, ...] = get_args(EncouragementLevel)
TASK_COMPLEXITIES: tuple[TaskComplexity, ...] = get_args(TaskComplexity)
PROFILE_PHASES: tuple[ProfilePhase, ...] = get_args(ProfilePhase)
VERSION_CAUSES: tuple[VersionCause, ...] = get_args(VersionCause)

#: Free-form JSON object recorded with a decision or outcome (at most 8 KiB serialized).
Metadata = dict[str, Any]


class ContextRequest(TypedDict):
    """POST /v1/context: "user ``userId`` is about to face ``task``"."""

    #: 1–256 characters, no control characters.
    userId: str
    #: 1–8000 characters.
    task: str
    #: The task's complexity; leave it out when unknown.
    complexity: NotRequired[TaskComplexity | None]
    #: At most 100 characters.
    taskType: NotRequired[str | None]
    metadata: NotRequired[Metadata | None]


class ContextMetadata(TypedDict):
    profilePhase: ProfilePhase
    interactionCount: int
    explorationMode: bool


class ContextResponse(TypedDict):
    #: ``req_…``: pass it to ``outcome()``.
    requestId: str
    suggestedFraming: Framing
    communicationStyle: CommunicationStyle
    complexity: ComplexityHandling
    encouragement: EncouragementLevel
    #: Probability in [0, 1] that this combination is the user's best for this context.
    confidence: float
    rationale: str
    metadata: ContextMetadata


class OutcomeRequest(TypedDict):
    """POST /v1/outcome: what happened after a context call."""

    requestId: str
    started: bool
    completed: NotRequired[bool | None]
    #: Seconds, ≥ 0.
    timeToStart: NotRequired[float | None]
    flowState: NotRequired[bool | None]
    #: 0–1.
    satisfaction: NotRequired[float | None]
    metadata: NotRequired[Metadata | None]


class OutcomeResponse(TypedDict):
    success: bool
    message: str


class Profile(TypedDict):
    userId: str
    #: Current choice per dimension: the pinned value if pinned, else the learned best.
    preferredFraming: Framing
    communicationStyle: CommunicationStyle
    complexityPreference: ComplexityHandling
    encouragementLevel: EncouragementLevel
    pinned: list[PinnableField]
    profilePhase: ProfilePhase
    #: Outcomes applied to this profile.
    interactionCount: int
    #: ISO 8601 UTC.
    lastUpdated: str
    #: ``v<N>``.
    profileVersion: str


class ProfileUpdate(TypedDict, total=False):
    """PUT /v1/profile/:userId: a value pins a dimension, ``None`` unpins it. At least one dimension.

    A ``Profile`` as ``get_profile`` returned it may be sent back with changes: its read-only
    fields are ignored when they hold the current values (another value is a 400), and with
    ``pinned`` present only the dimensions whose value changed are pinned.
    """

    preferredFraming: Framing | None
    communicationStyle: CommunicationStyle | None
    complexityPreference: ComplexityHandling | None
    encouragementLevel: EncouragementLevel | None
    userId: str
    pinned: list[PinnableField]
    profilePhase: ProfilePhase
    interactionCount: int
    lastUpdated: str
    profileVersion: str


class ProfileVersion(TypedDict):
    profileVersion: str
    cause: VersionCause
    #: Profile fields whose value differs from the previous version.
    changed: list[str]
    createdAt: str


class VersionPage(TypedDict):
    #: Newest first.
    data: list[ProfileVersion]
    hasMore: bool
