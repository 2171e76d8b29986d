import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { z } from 'zod';
import { AppError } from '../shared/errors/app-error';
import type { Logger } from '../shared/logger/logger';

/**
 * /metrics under API_PROCESSES=N: a scrape reaches one child at random, so each child asks the
 * primary, which gathers every child's registry and sums them (prom-client's
 * AggregatorRegistry; gauges by their own rule). Prometheus then sees one API per host, with
 * counters that never go back when the next scrape lands on another child.
 */
const request = z.object({ type: z.literal('cos:metrics-request'), id: z.number() });
const response = z.object({ type: z.literal('cos:metrics-response'), id: z.number(), text: z.string().optional() });

/** Longer than prom-client's own 5 s wait for the children. */
const ANSWER_TIMEOUT_MS = 7_000;

/** In the primary: answers children's metrics requests with all children's metrics summed. */
export function serveClusterMetrics(logger: Logger): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (child, message) => {
    const asked = request.safeParse(message);
    if (!asked.success) return;
    aggregator.clusterMetrics().then(
      (text) => child.send({ type: 'cos:metrics-response', id: asked.data.id, text }),
      (error: unknown) => {
        logger.warn({ err: error }, 'gathering the api processes metrics failed');
        child.send({ type: 'cos:metrics-response', id: asked.data.id });
      },
    );
  });
}

/** In a child: the metrics text of every API process, from the primary. */
export function clusterMetricsText(registry: Registry): () => Promise<string> {
  new AggregatorRegistry(); // answers the primary's requests for this process's metrics…
  AggregatorRegistry.setRegistries([registry]); // …from this registry
  const waiting = new Map<number, (text: string | undefined) => void>();
  let nextId = 0;
  process.on('message', (message) => {
    const answer = response.safeParse(message);
    if (answer.success) waiting.get(answer.data.id)?.(answer.data.text);
  });
  return async () => {
    const id = nextId++;
    const text = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ANSWER_TIMEOUT_MS);
      waiting.set(id, (answered) => {
        clearTimeout(timer);
        resolve(answered);
      });
      process.send!({ type: 'cos:metrics-request', id });
    }).finally(() => waiting.delete(id));
    if (text === undefined) {
      throw new AppError('SERVICE_UNAVAILABLE', 'The other API processes did not report their metrics; retry', undefined, {
        'Retry-After': '1',
      });
    }
    return text;
  };
}
