import { alternate, type AbResult } from './ab';
import { cannon, postEach } from './load-client';
import type { LoadRig } from './load-rig';
import { rss, type Rss } from './memory';
import { log } from './processes';

/**
 * The API with API_PROCESSES=N (node:cluster, one port) under the context load of the test
 * key, alternated with the bare baseline (still one process): reported, no target.
 */

export interface ApiProcessesPhase extends AbResult {
  processes: number;
  /** The primary and its API processes, at the end of the phase. */
  rssAfter: Rss;
}

export async function apiProcessesPhase(rig: LoadRig, processes: number): Promise<ApiProcessesPhase> {
  const { connections, duration, warmup, users } = rig.opts;
  log(`restarting the api with API_PROCESSES=${processes} (and ${rig.opts.workers} worker(s))…`);
  await rig.stopWorkers();
  rig.startWorkers(rig.opts.workers);
  await rig.startApi(processes);
  // Each process keeps its own parsed learner states: every user passes through each a few times.
  const request = rig.contextRequest(rig.headers);
  await cannon(rig.api.port, request, { connections, amount: users * processes * 2 });
  await cannon(rig.api.port, request, { connections, duration: warmup });
  const ab = await alternate(rig, {
    what: `context (test key), API_PROCESSES=${processes}`,
    bare: () => cannon(rig.bare.port, postEach('/bare', rig.headers, rig.contextBody), { connections, duration }),
    subject: () => cannon(rig.api.port, request, { connections, duration }),
    beforeEach: () => rig.drained('earlier decisions to be applied'),
  });
  return { ...ab, processes, rssAfter: rss(rig.roles.api ?? []) };
}
