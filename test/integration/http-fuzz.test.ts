import fc from 'fast-check';
import type { Response } from 'supertest';
import { ERROR_STATUS, type ErrorCode } from '../../shared/errors/app-error';
import { bearer, startHarness, type Harness } from '../support/harness';
import {
  METHODS,
  contentType,
  contextBody,
  outcomeBody,
  pathSegment,
  profileBody,
  queryString,
  rawBody,
  type Method,
} from '../support/fuzz-arbitraries';

/**
 * Property: whatever a client with a valid key sends to any route — any JSON, text that is
 * not JSON, deep nesting, wrong types, huge numbers, control characters, unpaired surrogates,
 * odd paths, methods and content types — the API never answers 5xx, and every 4xx is the
 * error envelope {error: {code, message, statusCode[, details]}} whose statusCode is the HTTP
 * status and whose code is a documented one for that status.
 */
const RUNS = 250;

/** A user with a profile for the profile routes (the outcomes go to another, so reads never wait for them). */
const PROFILE_USER = 'fuzz-profile';

let h: Harness;
let key: string;
const requestIds: string[] = [];
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('fuzz', 'test');
  for (let i = 0; i < 3; i++) {
    const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'fuzz-issued', task: 'Plan' });
    requestIds.push((res.body as { requestId: string }).requestId);
  }
  expect((await h.http().put(`/v1/profile/${PROFILE_USER}`).set(bearer(key)).send({ preferredFraming: 'purpose' })).status).toBe(200);
});
afterAll(() => h.close());

function expectWellFormed(res: Response, method: Method): void {
  expect(res.status).toBeLessThan(500);
  if (res.status < 400 || method === 'head') return;
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as { error?: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  const { code, message, statusCode, traceId, docUrl, details, ...rest } = body.error!;
  expect(rest).toEqual({});
  expect(statusCode).toBe(res.status);
  expect(traceId).toBe(res.headers['x-request-id']);
  expect(docUrl).toBe(`/docs#error-${String(code).toLowerCase()}`);
  expect(typeof message).toBe('string');
  expect(ERROR_STATUS[code as ErrorCode]).toBe(res.status);
  if (details !== undefined) expect(typeof details).toBe('object');
}

type Sent = { method: Method; path: string; body?: { text: string; type: string } };

async function send({ method, path, body }: Sent): Promise<Response> {
  let req = h.http()[method](path).set(bearer(key));
  if (body) req = req.set('Content-Type', body.type).send(body.text);
  return req;
}

/** Checks the property over RUNS requests; returns how many got each status. */
async function property(arbitrary: fc.Arbitrary<Sent>): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (sent) => {
      const res = await send(sent);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expectWellFormed(res, sent.method);
    }),
    { numRuns: RUNS },
  );
  return statuses;
}

/** The runs got these statuses among others: they reached the handlers, not only the early refusals. */
const expectReached = (statuses: Map<number, number>, ...expected: number[]) =>
  expect(expected.filter((status) => !statuses.has(status))).toEqual([]);

const withBody = (text: fc.Arbitrary<string>) => fc.record({ text, type: contentType });
/** A path userId: arbitrary, or the user the profile routes can find. */
const userSegment = fc.oneof({ weight: 3, arbitrary: pathSegment }, { weight: 1, arbitrary: fc.constant(PROFILE_USER) });
const post = (path: string, body: fc.Arbitrary<unknown>) =>
  fc.record({ method: fc.constant('post' as const), path: fc.constant(path), body: withBody(rawBody(body)) });

describe('HTTP fuzz: no 5xx, and every 4xx is the error envelope', () => {
  it('POST /v1/context', async () => {
    expectReached(await property(post('/v1/context', contextBody)), 200, 400, 415);
  });

  it('POST /v1/outcome', async () => {
    expectReached(await property(post('/v1/outcome', outcomeBody(requestIds))), 202, 400, 404);
  });

  it('GET and DELETE /v1/profile/:userId', async () => {
    const statuses = await property(
      fc.oneof(
        fc.record({ method: fc.constant('get' as const), path: userSegment.map((id) => `/v1/profile/${id}`) }),
        // Not PROFILE_USER's: the routes after this one find it.
        fc.record({ method: fc.constant('delete' as const), path: pathSegment.map((id) => `/v1/profile/${id}`) }),
      ),
    );
    expectReached(statuses, 204, 400, 404);
  });

  it('PUT /v1/profile/:userId', async () => {
    const statuses = await property(
      fc.record({
        method: fc.constant('put' as const),
        path: userSegment.map((id) => `/v1/profile/${id}`),
        body: withBody(rawBody(profileBody)),
      }),
    );
    expectReached(statuses, 200, 400);
  });

  it('GET /v1/profile/:userId/versions', async () => {
    const statuses = await property(
      fc.record({
        method: fc.constant('get' as const),
        path: fc.tuple(userSegment, queryString).map(([id, query]) => `/v1/profile/${id}/versions${query ? `?${query}` : ''}`),
      }),
    );
    expectReached(statuses, 200, 400, 404);
  });

  it('any method on known and unknown paths', async () => {
    const path = fc.oneof(
      fc.constantFrom(
        '/v1/context',
        '/v1/outcome',
        `/v1/profile/${PROFILE_USER}`,
        `/v1/profile/${PROFILE_USER}/versions`,
        '/v1',
        '/',
        '/v2/context',
      ),
      fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((segments) => `/v1/${segments.join('/')}`),
      fc.webPath(),
    );
    const statuses = await property(
      fc.record({ method: fc.constantFrom(...METHODS), path, body: fc.option(withBody(rawBody(contextBody)), { nil: undefined }) }),
    );
    expectReached(statuses, 404, 405);
  });
});
