/**
 * Request and response shapes of the service's /v1 API (its docs/API.md). The package stands
 * alone, so the value sets are written out here; the service's test suite checks that they
 * match the ones it validates with. An optional request field given as `undefined` is left out of
 * the JSON, the same as not giving it, so values read from optional settings fit as they are.
 */

export const FRAMINGS = ['micro_steps', 'time_boxed', 'purpose', 'challenge', 'curiosity'] as const;
export const COMMUNICATION_STYLES = ['direct', 'warm', 'structured', 'playful'] as const;
export const COMPLEXITY_HANDLING = ['chunked', 'scaffolded', 'whole'] as const;
export const ENCOURAGEMENT_LEVELS = ['minimal', 'moderate', 'enthusiastic'] as const;
export const TASK_COMPLEXITIES = ['low', 'medium', 'high'] as const;
export const PROFILE_PHASES = ['cold_start', 'learning', 'established'] as const;
export const VERSION_CAUSES = ['outcome', 'manual', 'reset'] as const;

export type Framing = (typeof FRAMINGS)[number];
export type CommunicationStyle = (typeof COMMUNICATION_STYLES)[number];
export type ComplexityHandling = (typeof COMPLEXITY_HANDLING)[number];
export type EncouragementLevel = (typeof ENCOURAGEMENT_LEVELS)[number];
export type TaskComplexity = (typeof TASK_COMPLEXITIES)[number];
export type ProfilePhase = (typeof PROFILE_PHASES)[number];
export type VersionCause = (typeof VERSION_CAUSES)[number];

/** Free-form JSON object recorded with a decision or outcome (at most 8 KiB serialized). */
export type Metadata = Record<string, unknown>;

/** POST /v1/context: "user `userId` is about to face `task`". */
export interface ContextRequest {
  /** 1–256 characters, no control characters. */
  userId: string;
  /** 1–8000 characters. */
  task: string;
  /** The task's complexity; leave it out when unknown. */
  complexity?: TaskComplexity | undefined;
  /** At most 100 characters. */
  taskType?: string | undefined;
  metadata?: Metadata | undefined;
}

export interface ContextResponse {
  /** `req_…`: pass it to `outcome()`. */
  requestId: string;
  suggestedFraming: Framing;
  communicationStyle: CommunicationStyle;
  complexity: ComplexityHandling;
  encouragement: EncouragementLevel;
  /** Probability in [0, 1] that this combination is the user's best for this context. */
  confidence: number;
  rationale: string;
  metadata: {
    profilePhase: ProfilePhase;
    interactionCount: number;
    explorationMode: boolean;
  };
}

/** POST /v1/outcome: what happened after a context call. */
export interface OutcomeRequest {
  requestId: string;
  started: boolean;
  completed?: boolean | undefined;
  /** Seconds, ≥ 0. */
  timeToStart?: number | undefined;
  flowState?: boolean | undefined;
  /** 0–1. */
  satisfaction?: number | undefined;
  metadata?: Metadata | undefined;
}

export interface OutcomeResponse {
  success: true;
  message: string;
}

/** The profile fields PUT can pin. */
export type PinnableField = 'preferredFraming' | 'communicationStyle' | 'complexityPreference' | 'encouragementLevel';

export interface Profile {
  userId: string;
  /** Current choice per dimension: the pinned value if pinned, else the learned best. */
  preferredFraming: Framing;
  communicationStyle: CommunicationStyle;
  complexityPreference: ComplexityHandling;
  encouragementLevel: EncouragementLevel;
  pinned: PinnableField[];
  profilePhase: ProfilePhase;
  /** Outcomes applied to this profile. */
  interactionCount: number;
  /** ISO 8601 UTC. */
  lastUpdated: string;
  /** `v<N>`. */
  profileVersion: string;
}

/**
 * PUT /v1/profile/:userId: a value pins a dimension, `null` unpins it. At least one dimension.
 * A `Profile` as `getProfile` returned it may be sent back with changes: its read-only fields
 * are ignored when they hold the current values (another value is a 400), and with `pinned`
 * present only the dimensions whose value changed are pinned.
 */
export interface ProfileUpdate {
  preferredFraming?: Framing | null | undefined;
  communicationStyle?: CommunicationStyle | null | undefined;
  complexityPreference?: ComplexityHandling | null | undefined;
  encouragementLevel?: EncouragementLevel | null | undefined;
  userId?: string | undefined;
  pinned?: PinnableField[] | undefined;
  profilePhase?: ProfilePhase | undefined;
  interactionCount?: number | undefined;
  lastUpdated?: string | undefined;
  profileVersion?: string | undefined;
}

export interface ProfileVersion {
  profileVersion: string;
  cause: VersionCause;
  /** Profile fields whose value differs from the previous version. */
  changed: string[];
  createdAt: string;
}

export interface VersionPage {
  /** Newest first. */
  data: ProfileVersion[];
  hasMore: boolean;
}

export interface ListVersionsOptions {
  /** 1–100 (the service's default is 20). */
  limit?: number | undefined;
  /** Only versions below this one: `"v12"` or `12`. */
  before?: string | number | undefined;
}
