import { randomInt } from 'node:crypto';
import type { Tenant } from '../../shared/domain/environment';
import type { Engine } from '../../shared/domain/engine/engine';
import type { DecisionContext } from '../../shared/domain/learner';
import { seededRandom } from '../../shared/domain/random';
import type { DecisionLog } from '../../shared/jobs/decision-log';
import { issueRequestId, sealable } from '../../shared/ids/request-id';
import type { ContextRequest } from '../schemas/request.schemas';
import type { ContextResponse } from '../schemas/response.schemas';
import type { KnownUser, KnownUsers } from './known-users';
import type { PopulationLoader } from './population-loader';
import type { ProfileRead, ProfileLoader } from './profile-loader';

/**
 * POST /v1/context: decide from the cached profile and answer; the decision is logged behind
 * the answer (the requestId carries what its outcome learns from, docs/adr/0010-group-commit.md).
 */
export interface ContextServiceDeps {
  profiles: ProfileLoader;
  populations: PopulationLoader;
  learner: Engine;
  /** Where each decision is logged, behind the answer. */
  decisions: DecisionLog;
  users: KnownUsers;
  /** Signs the requestIds it issues. */
  secret: string;
}

export class ContextService {
  private readonly profiles: ProfileLoader;
  private readonly populations: PopulationLoader;
  private readonly learner: Engine;
  private readonly decisions: DecisionLog;
  private readonly users: KnownUsers;
  private readonly secret: string;

  constructor(deps: ContextServiceDeps) {
    ({
      profiles: this.profiles,
      populations: this.populations,
      learner: this.learner,
      decisions: this.decisions,
      users: this.users,
      secret: this.secret,
    } = deps);
  }

  /** The user a request names, as the profile reads know them (their hash: where their keys live). */
  user(tenant: Tenant, userId: string): KnownUser {
    return this.users.of(tenant, userId);
  }

  /** Decides for `read`'s user from their profile, which `read` loads (settling what it carries). */
  async decide(read: ProfileRead, request: ContextRequest): Promise<ContextResponse> {
    const { tenant, hash } = read.user;
    const loading = this.populations.get(tenant);
    // The profile read settles a live key's limit: its answer (a 429, say) comes before any
    // failure of the prior's, which is awaited after it (and not left unhandled meanwhile).
    loading.catch(() => undefined);
    const profile = await this.profiles.findOrCreate(read);
    const prior = await loading;
    const state = profile.state;
    const context: DecisionContext = {};
    if (request.complexity !== undefined) context.taskComplexity = request.complexity;
    if (request.taskType !== undefined) context.taskType = request.taskType;
    const decision = this.learner.decide(state, { context, pins: profile.pins, random: seededRandom(randomInt(2 ** 32)) }, prior);
    const summary = this.learner.summarize(state);
    const issuedAt = Date.now();
    // Rounded as the requestId carries them, so the log and the outcome learn from the same values.
    const probabilities = sealable(decision.probabilities);
    // Properties written out, not spread: on this path `{ ...tenant, more }` costs microseconds (docs/adr/0016-hot-path.md).
    const { accountId, environment } = tenant;
    const requestId = issueRequestId(
      {
        accountId,
        environment,
        issuedAt,
        userHash: hash,
        decision: { userId: request.userId, choice: decision.choice, probabilities, context },
      },
      this.secret,
    );
    this.decisions.record(hash, {
      accountId,
      environment,
      requestId,
      userId: request.userId,
      generation: profile.generation,
      // Logged as the request named them (`complexity`: the task's).
      context: { complexity: request.complexity, taskType: request.taskType, metadata: request.metadata },
      choice: decision.choice,
      probabilities,
      explored: decision.explored,
      confidence: decision.confidence,
      issuedAt,
    });
    return {
      requestId,
      suggestedFraming: decision.choice.framing,
      communicationStyle: decision.choice.style,
      complexity: decision.choice.complexityHandling,
      encouragement: decision.choice.encouragement,
      confidence: Number(decision.confidence.toFixed(4)),
      rationale: decision.rationale,
      metadata: {
        profilePhase: summary.phase,
        interactionCount: profile.interactionCount,
        explorationMode: decision.explored.length > 0,
      },
    };
  }
}
