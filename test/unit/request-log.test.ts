import express from 'express';
import request from 'supertest';
import { requestLog } from '../../api/middleware/request-log.middleware';
import { createLogger } from '../../shared/logger/logger';
import { capture } from '../support/cli';

/** The access log: one line per request at most, at a level that says whose fault it was. */
describe('requestLog', () => {
  const levels = async (status: number): Promise<number[]> => {
    const out = capture();
    const app = express();
    app.use(
      requestLog({
        logger: createLogger('info', 'test', out.stream),
        observe: () => undefined,
        options: { sampleRate: 0, slowMs: 60_000 },
      }),
    );
    app.get('/', (_req, res) => void res.status(status).end());
    const res = await request(app).get('/').set('X-Request-Id', 'client-id-1');
    expect(res.headers['x-request-id']).toBe('client-id-1');
    return out
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { level: number }).level);
  };

  it('logs a 500 at error, a 503 (a dependency away, logged by its watch) not at all, a 4xx at info and an unsampled 2xx not at all', async () => {
    expect(await levels(500)).toEqual([50]);
    expect(await levels(503)).toEqual([]);
    expect(await levels(404)).toEqual([30]);
    expect(await levels(200)).toEqual([]);
  });
});
