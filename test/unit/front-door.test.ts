import { Socket } from 'node:net';
import express from 'express';
import { ownMessages } from '../../api/http/front-door';

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
