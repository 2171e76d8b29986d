import { readFileSync } from 'node:fs';
import path from 'node:path';
import { V1_ROUTES, type RouteName } from '../../api/routes/v1.routes';
import type { ContextRequest, OutcomeRequest, ProfileUpdate } from '../../api/schemas/request.schemas';
import type { ContextResponse } from '../../api/schemas/response.schemas';
import type { ProfileService } from '../../api/services/profile.service';
import { COMPLEXITY_HANDLING, ENCOURAGEMENT, FRAMINGS, PROFILE_PHASES, STYLES, TASK_COMPLEXITY } from '../../shared/domain/arms';
import { ERROR_STATUS } from '../../shared/errors/app-error';
import type { ProfileResponse } from '../../shared/profile/profile';
import * as sdk from '../../sdk/src';
import { WEBHOOK_EVENT_TYPES } from '../../shared/webhooks/event-catalog';

/**
 * The SDK writes the contract's shapes out (it is a package of its own); these checks fail when
 * the service's schemas and the SDK's types drift apart. The type checks run in `npm run
 * typecheck`; the value checks here.
 */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type SameKeys<A, B> = Equal<keyof A, keyof B>;

// Requests: the SDK sends exactly what the service accepts. (`complexity` is optional in the
// SDK: absent means unknown.)
const requestTypes: [
  Equal<Omit<sdk.ContextRequest, 'complexity'>, Omit<ContextRequest, 'complexity'>>,
  ContextRequest['complexity'] extends sdk.ContextRequest['complexity'] ? true : false,
  Equal<sdk.OutcomeRequest, OutcomeRequest>,
  Equal<sdk.ProfileUpdate, ProfileUpdate>,
] = [true, true, true, true];

// Responses: the SDK's types name every field the service sends, with narrower value types.
type VersionPage = Awaited<ReturnType<ProfileService['versions']>>;
const responseTypes: [
  SameKeys<sdk.ContextResponse, ContextResponse>,
  SameKeys<sdk.ContextResponse['metadata'], ContextResponse['metadata']>,
  sdk.ContextResponse extends ContextResponse ? true : false,
  Equal<Omit<sdk.Profile, 'pinned'>, Omit<ProfileResponse, 'pinned'>>,
  sdk.Profile['pinned'] extends ProfileResponse['pinned'] ? true : false,
  Equal<sdk.VersionPage, VersionPage>,
] = [true, true, true, true, true, true];

/**
 * Each /v1 route as the SDKs call it: a route added to the table fails to compile here until it
 * has its TypeScript method (called below, its request checked against the route) and its
 * Python method (whose docstring names the route).
 */
const SDK_CALLS: Record<RouteName, { call: (client: sdk.CosClient) => Promise<unknown>; python: string }> = {
  context: { call: (c) => c.context({ userId: 'u1', task: 't' }), python: 'context' },
  outcome: { call: (c) => c.outcome({ requestId: 'req_x', started: true, completed: true }), python: 'outcome' },
  'profile.get': { call: (c) => c.getProfile('u1'), python: 'get_profile' },
  'profile.update': { call: (c) => c.updateProfile('u1', { preferredFraming: null }), python: 'update_profile' },
  'profile.delete': { call: (c) => c.deleteProfile('u1'), python: 'delete_profile' },
  'profile.versions': { call: (c) => c.listVersions('u1'), python: 'list_versions' },
};
const PYTHON_CLIENT = readFileSync(path.join(__dirname, '../../sdk-python/src/cos_sdk/client.py'), 'utf8');

/** The route a Python client method's docstring names (`"""GET /v1/profile/:userId: …`). */
function pythonRoute(method: string): string | undefined {
  const at = PYTHON_CLIENT.indexOf(`\n    def ${method}(`);
  if (at < 0) return undefined;
  return /"""([A-Z]+ \/[^\s;]*?)(?=:\s|;|\s)/.exec(PYTHON_CLIENT.slice(at))?.[1];
}

describe('every /v1 route', () => {
  it.each(V1_ROUTES.map((route) => [route.name, route] as const))('%s has its method in both SDKs', async (name, route) => {
    const sent: string[] = [];
    const client = new sdk.CosClient({
      apiKey: 'cos_sk_test_x',
      baseUrl: 'http://cos.invalid',
      maxRetries: 0,
      fetch: async (url, init) => {
        sent.push(`${init.method} ${new URL(url).pathname}`);
        return route.method === 'delete' ? new Response(null, { status: 204 }) : Response.json({}, { status: 200 });
      },
    });
    await SDK_CALLS[name].call(client);
    const method = route.method.toUpperCase();
    expect(sent).toEqual([`${method} ${route.path.replace(':userId', 'u1')}`]);
    expect(pythonRoute(SDK_CALLS[name].python)).toBe(`${method} ${route.path}`);
  });
});

describe('the SDK and the service agree on', () => {
  it('the request and response types (checked by the compiler)', () => {
    expect([...requestTypes, ...responseTypes].every(Boolean)).toBe(true);
  });

  it('every value set', () => {
    expect(sdk.FRAMINGS).toEqual(FRAMINGS);
    expect(sdk.COMMUNICATION_STYLES).toEqual(STYLES);
    expect(sdk.COMPLEXITY_HANDLING).toEqual(COMPLEXITY_HANDLING);
    expect(sdk.ENCOURAGEMENT_LEVELS).toEqual(ENCOURAGEMENT);
    expect(sdk.TASK_COMPLEXITIES).toEqual(TASK_COMPLEXITY);
    expect(sdk.PROFILE_PHASES).toEqual(PROFILE_PHASES);
  });

  it('every webhook event type the service sends', () => {
    expect([...sdk.WEBHOOK_EVENT_TYPES].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it('every error code and its status', () => {
    expect(sdk.ERROR_CODES).toEqual(ERROR_STATUS);
  });

  it('the SDK version sent in User-Agent and the one in its package.json', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../sdk/package.json'), 'utf8')) as { version: string };
    expect(sdk.SDK_VERSION).toBe(manifest.version);
  });
});
