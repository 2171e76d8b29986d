import { Socket } from 'node:net';
import express from 'express';
import type { RequestHandler } from 'express';
import { exactRoutes, ownMessages } from '../../api/http/front-door';

describe('ownMessages', () => {
  it("makes the server's requests and responses with the app's own prototypes, so Express's switch changes nothing", () => {
    const app = express();
    const { IncomingMessage: Request, ServerResponse: Response } = ownMessages(app);
    const req = new Request!(new Socket());
    const res = new Response!(req);
    expect(Object.getPrototypeOf(req)).toBe(app.request);
    expect(Object.getPrototypeOf(res)).toBe(app.response);
    // What Express's request and response add is still there.
    expect(typeof Reflect.get(req, 'get')).toBe('function');
    expect(typeof Reflect.get(res, 'status')).toBe('function');
    expect(Reflect.get(req, 'app')).toBe(app);
  });
});

describe('exactRoutes', () => {
  const run: RequestHandler = (_req, _res, next) => next();
  const before: RequestHandler = (_req, _res, next) => next();
  const find = exactRoutes([{ method: 'post', path: '/v1/context', run }], before);

  it('finds a static path by method and exact path, whatever the query string', () => {
    expect(find('POST', '/v1/context')).toBeInstanceOf(Function);
    expect(find('POST', '/v1/context?x=1')).toBeInstanceOf(Function);
  });

  it('leaves every other spelling, method and path to the app', () => {
    for (const [method, url] of [
      ['POST', '/v1/context/'],
      ['POST', '/V1/CONTEXT'],
      ['GET', '/v1/context'],
      ['POST', '/v1/outcome'],
      [undefined, '/v1/context'],
    ] as const) {
      expect(find(method, url)).toBeUndefined();
    }
  });
});
