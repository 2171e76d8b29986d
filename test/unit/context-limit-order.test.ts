import { ContextService } from '../../api/services/context.service';
import type { KnownUsers } from '../../api/services/known-users';
import type { PopulationLoader } from '../../api/services/population-loader';
import type { ProfileLoader } from '../../api/services/profile-loader';
import { createEngine } from '../../shared/domain/engine/engine';
import { AppError } from '../../shared/errors/app-error';
import type { DecisionLog } from '../../shared/jobs/decision-log';

/**
 * A live context call's limit is settled by its profile read, while the tenant's prior loads
 * beside it: whatever fails first, the limiter's answer is the call's answer.
 */
const refused = new AppError('RATE_LIMIT_EXCEEDED', 'Rate limit of 10 requests per second exceeded for this key');

it("answers with the limiter's refusal even when the prior's read failed first", async () => {
  const profiles = {
    findOrCreate: () => new Promise((_resolve, reject) => setTimeout(() => reject(refused), 20)),
  } as unknown as ProfileLoader;
  const populations = { get: () => Promise.reject(new Error('prior unavailable')) } as unknown as PopulationLoader;
  const users = {
    of: () => ({ tenant: { accountId: 'acct_1', environment: 'live' }, userId: 'u', hash: '00'.repeat(8) }),
  } as unknown as KnownUsers;
  const service = new ContextService({
    profiles,
    populations,
    learner: createEngine(),
    decisions: {} as DecisionLog,
    users,
    secret: 'unit-secret-0123456789abcdef',
  });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await expect(
      service.decide(
        {
          user: service.user({ accountId: 'acct_1', environment: 'live' }, 'u'),
          limit: { withRead: async () => ({ profile: null, pending: 0 }) },
        },
        { userId: 'u', task: 't' },
      ),
    ).rejects.toBe(refused);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
