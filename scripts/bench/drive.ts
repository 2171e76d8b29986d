import http from 'node:http';
import { HOST } from './processes';

/**
 * A closed-loop HTTP driver for benchmarks that need a set amount of work done through the
 * real API rather than a rate: `count` JSON POSTs, `concurrency` in flight at once, each
 * answer handed to `onAnswer`. Resolves with how many answers had each status.
 */
export async function drive(
  port: number,
  headers: Record<string, string>,
  count: number,
  concurrency: number,
  request: (i: number) => { path: string; body: unknown },
  onAnswer: (i: number, status: number, body: string) => void = () => undefined,
): Promise<Record<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const { path, body } = request(i);
      const payload = JSON.stringify(body);
      const req = http.request(
        { host: HOST, port, method: 'POST', path, agent, headers: { ...headers, 'Content-Length': Buffer.byteLength(payload) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            onAnswer(i, res.statusCode ?? 0, text);
            resolve();
          });
        },
      );
      req.on('error', () => {
        statuses[0] = (statuses[0] ?? 0) + 1;
        resolve();
      });
      req.end(payload);
    });
  const lane = async () => {
    while (next < count) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  agent.destroy();
  return statuses;
}
