import supertest from 'supertest';
import type { Response } from 'supertest';
import { checkApiExchange, checkLater, isApiListener, isApiUrl, takeMismatches } from './api-responses';
import { sentPath, supertestExchange } from './openapi';

/**
 * A setup file of every jest project (jest.config.js): each response a test receives from the
 * API — through supertest against the app, `fetch` against a listening or spawned API (the SDK's
 * requests too), or the node:http helpers of processes.ts — is checked against the OpenAPI
 * document, and a test that received one the document does not describe fails, listing them.
 * Which responses are the API's: api-responses.ts.
 */

// supertest: `assert` sees each response once, with the target it was sent to — a listener,
// which supertest wraps in a server of its own, or a URL.
type TestInternals = { app: unknown; assert(error: unknown, res: Response | undefined, fn: unknown): unknown };
const Test = (supertest as unknown as { Test: { prototype: TestInternals } }).Test;
const assert = Test.prototype.assert;
Test.prototype.assert = function (this: TestInternals, error, res, fn) {
  const target = this.app as { listeners?: (event: string) => unknown[] } | string;
  const api = typeof target === 'string' ? isApiUrl(target) : isApiListener(target?.listeners?.('request')[0]);
  if (res && api) checkApiExchange(supertestExchange(res));
  return assert.call(this, error, res, fn);
};

// fetch: the body is read from a clone, so the test reads the response as it would have.
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<globalThis.Response> => {
  const response = await realFetch(input, init);
  const url = typeof input === 'string' ? input : 'href' in input ? input.href : input.url;
  if (isApiUrl(url)) {
    const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const headers = Object.fromEntries(response.headers);
    checkLater(
      response
        .clone()
        .text()
        .then((text) => checkApiExchange({ method, path: sentPath(url), status: response.status, headers, text })),
    );
  }
  return response;
};

async function failOnMismatches(): Promise<void> {
  const found = await takeMismatches();
  if (found.length === 0) return;
  throw new Error(
    `Responses of the API that its OpenAPI document does not describe (test/support/openapi.ts):\n${found.map((m) => `  ${m}`).join('\n')}`,
  );
}

afterEach(failOnMismatches);
// Responses received outside any test (beforeAll, afterAll) fail the file.
afterAll(failOnMismatches);
