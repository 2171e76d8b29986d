import { yieldTheCpu } from '../../shared/process/cpu-priority';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { answerLabel, attemptSignIn, clientAddress, openSession, type SignInSession } from './signin-client';

/**
 * bench:signin's flood of wrong sign-ins, run as a process of its own (so its work neither
 * delays the bench's open-loop client nor hides in its CPU figure):
 *
 *   node signin-flood.js <port> <connections> <maxSeconds> <firstClient> <resultFile>
 *
 * Each connection sends its next attempt as soon as the last one is answered, every attempt
 * with a new unknown email and a new client address, so the throttle never refuses one and
 * each is worth verifying. It prints `flooding` once its sessions are open, stops on SIGTERM or
 * after maxSeconds, and writes its FloodResult as JSON to resultFile.
 */

export interface FloodResult {
  attempts: number;
  /** Answers by status ('429 busy' / '429 throttled' apart, 'error' for network errors). */
  answers: Record<string, number>;
  /** From the first attempt to the last answer. */
  seconds: number;
  /** Password verifications finished per second: each 401 is one. */
  verificationsPerSecond: number;
  /** The next unused client address. */
  nextClient: number;
}

export interface FloodOptions {
  port: number;
  connections: number;
  maxSeconds: number;
  firstClient: number;
}

const WRONG_PASSWORD = 'not the password of anyone';

export async function flood(o: FloodOptions, stopped: () => boolean, onStart: () => void): Promise<FloodResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  // A session per connection, as that many browsers would hold.
  const sessions = await Promise.all(Array.from({ length: o.connections }, () => openSession(o.port)));
  const answers: Record<string, number> = {};
  let next = o.firstClient;
  const start = performance.now();
  const deadline = start + o.maxSeconds * 1000;
  const connection = async (session: SignInSession) => {
    while (!stopped() && performance.now() < deadline) {
      const n = next++;
      const input = { email: `f${n}@flood.bench`, password: WRONG_PASSWORD, client: clientAddress(n), accept: 'text/html' };
      const label = await attemptSignIn(session, agent, input).then(answerLabel, () => 'error');
      answers[label] = (answers[label] ?? 0) + 1;
      // A refused connection answers at once: pause rather than spin.
      if (label === 'error') await new Promise((r) => setTimeout(r, 10));
    }
  };
  onStart();
  await Promise.all(sessions.map(connection));
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  return {
    attempts: next - o.firstClient,
    answers,
    seconds: Math.round(seconds * 100) / 100,
    verificationsPerSecond: Math.round(((answers['401'] ?? 0) / seconds) * 10) / 10,
    nextClient: next,
  };
}

function main(): void {
  const [port, connections, maxSeconds, firstClient] = process.argv.slice(2, 6).map(Number);
  const resultFile = process.argv[6];
  if (!port || !connections || !maxSeconds || firstClient === undefined || !Number.isInteger(firstClient) || !resultFile) {
    process.stderr.write('usage: signin-flood.js <port> <connections> <maxSeconds> <firstClient> <resultFile>\n');
    process.exit(2);
  }
  // The flood stands for attackers elsewhere: its own CPU on this machine is not the server's,
  // so it runs at the lowest priority and takes only what the server leaves.
  yieldTheCpu(19);
  let stop = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => (stop = true));
  flood(
    { port, connections, maxSeconds, firstClient },
    () => stop,
    () => process.stdout.write('flooding\n'),
  ).then(
    (result) => {
      writeFileSync(resultFile, JSON.stringify(result));
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`flood failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) main();
