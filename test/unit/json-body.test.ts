import { Readable } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { jsonBody } from '../../api/http/json-body';

/** The direct JSON body reader on a stream standing in for the request (the HTTP cases are in test/integration/http-protocol.test.ts). */
function request(chunks: Buffer[] | null, headers: Record<string, string> = {}): Request {
  const stream = new Readable({ read() {} });
  if (chunks) {
    for (const chunk of chunks) stream.push(chunk);
    stream.push(null);
  }
  const size = chunks ? chunks.reduce((n, c) => n + c.length, 0) : 10;
  return Object.assign(stream, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(size), ...headers },
    complete: chunks !== null,
  }) as unknown as Request;
}

function read(req: Request): Promise<unknown> {
  return new Promise((resolve) =>
    jsonBody(req, {} as Response, ((error?: unknown) => resolve(error ?? { body: req.body })) as NextFunction),
  );
}

it('reads a JSON body sent in pieces, a leading BOM dropped', async () => {
  const text = Buffer.from('\ufeff{"userId":"ü","n":[1,2]}', 'utf8');
  expect(await read(request([text.subarray(0, 5), text.subarray(5)]))).toEqual({ body: { userId: 'ü', n: [1, 2] } });
});

it('answers a client that went away before its body was read with INVALID_JSON, instead of waiting for ever', async () => {
  const req = request(null);
  req.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  expect(await read(req)).toMatchObject({ code: 'INVALID_JSON', statusCode: 400 });
});

it('answers a body cut off mid-way with INVALID_JSON', async () => {
  const req = request(null);
  const result = read(req);
  req.push(Buffer.from('{"userId":'));
  req.destroy();
  expect(await result).toMatchObject({ code: 'INVALID_JSON' });
});
