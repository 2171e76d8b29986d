import http from 'node:http';
import { hashPassword } from '../../shared/dashboard-users/password';
import { createUser } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import { findOrCreateAccount } from '../../shared/accounts/account.repository';
import { log, sleep } from './processes';
import { answerLabel, attemptSignIn, clientAddress, openSession, type SignInSession } from './signin-client';
import { percentile } from './stats';

/**
 * bench:signin's first part: does a wrong password for a known email take as long as any
 * password for an unknown one? Pairs of the two, one after the other on one keep-alive
 * connection, alternate their order (known first, then unknown first), so that whatever one
 * attempt leaves behind (the known email's audit row is written after its answer) falls on
 * either kind equally. Each attempt claims an address of its own and no known email is tried
 * more than ATTEMPTS_PER_EMAIL times, so the throttle (5 per email, 5 per address) never answers
 * instead of the verification.
 */

export interface TimingOptions {
  pairs: number;
  /** Pairs before the measured ones (the first requests warm the dashboard's code and pools). */
  warmupPairs: number;
  /** Pause between attempts, so the previous attempt's background work is over. */
  gapMs: number;
  /** The first client address to use (clientAddress). */
  firstClient: number;
}

export interface Spread {
  median: number;
  p90: number;
}

export interface TimingResult {
  pairs: number;
  knownMs: Spread;
  unknownMs: Spread;
  /** Per pair, known − unknown. */
  gapMs: Spread & { p10: number };
  /** Pairs in which the known email answered later: about half when nothing tells them apart. */
  knownSlowerPairs: number;
  /** Two-sided sign test of knownSlowerPairs against a fair coin: small (< 0.05) means the order is not chance. */
  signTestP: number;
  /** Answers of every measured attempt by status (all 401 when the throttle stayed out of the way). */
  answers: Record<string, number>;
  /** The next unused client address. */
  nextClient: number;
}

/** Below the per-email limit of 5, with room for one attempt the bench did not plan. */
const ATTEMPTS_PER_EMAIL = 4;
const WRONG_PASSWORD = 'not the password of anyone';
/** Known and unknown emails of one length, so the page that echoes the email is as long for both. */
const knownEmail = (i: number) => `k${String(i).padStart(5, '0')}@signin.bench`;
const unknownEmail = (i: number) => `u${String(i).padStart(5, '0')}@signin.bench`;

/** Creates the known users, enough for `attempts` attempts at ATTEMPTS_PER_EMAIL each; returns their emails. */
export async function seedKnownUsers(db: Db, attempts: number): Promise<string[]> {
  const count = Math.max(30, Math.ceil(attempts / ATTEMPTS_PER_EMAIL));
  const { id: accountId } = await findOrCreateAccount(db, 'signin-bench');
  // One hash for all: each user's row holds its own copy, and hashing costs as much as verifying.
  const passwordHash = await hashPassword('the right password of a bench user');
  const emails = Array.from({ length: count }, (_, i) => knownEmail(i));
  for (const email of emails) await createUser(db, { accountId, email, role: 'viewer', passwordHash });
  return emails;
}

interface Pair {
  known: number;
  unknown: number;
  labels: string[];
}

/** One known and one unknown attempt, in the order `knownFirst` says, each from an address of its own. */
async function pair(
  session: SignInSession,
  agent: http.Agent,
  i: number,
  emails: string[],
  o: TimingOptions,
  knownFirst: boolean,
): Promise<Pair> {
  const email = emails[Math.floor(i / ATTEMPTS_PER_EMAIL)];
  if (email === undefined) throw new Error(`too few known users for pair ${i}`);
  const attempt = async (address: number, emailOfAttempt: string) => {
    const answer = await attemptSignIn(session, agent, {
      email: emailOfAttempt,
      password: WRONG_PASSWORD,
      client: clientAddress(address),
      accept: 'text/html',
    });
    await sleep(o.gapMs);
    return answer;
  };
  const base = o.firstClient + 2 * i;
  const first = await attempt(base, knownFirst ? email : unknownEmail(i));
  const second = await attempt(base + 1, knownFirst ? unknownEmail(i) : email);
  const [known, unknown] = knownFirst ? [first, second] : [second, first];
  return { known: known.ms, unknown: unknown.ms, labels: [answerLabel(known), answerLabel(unknown)] };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The exact two-sided binomial test of `k` successes in `n` fair coin flips. */
export function signTestP(k: number, n: number): number {
  if (n === 0) return 1;
  const tail = Math.min(k, n - k);
  let p = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let i = 0; i <= tail; i++) {
    p += term;
    term = (term * (n - i)) / (i + 1);
  }
  return Math.min(1, Math.round(2 * p * 1000) / 1000);
}
const sorted = (xs: number[]) => Float64Array.from(xs).sort();
const spread = (xs: number[]): Spread => ({ median: round2(percentile(sorted(xs), 50)), p90: round2(percentile(sorted(xs), 90)) });

/** The figures of the measured pairs; a pair counts only when both attempts were refused as wrong (401). */
function summarizePairs(pairs: Pair[], nextClient: number): TimingResult {
  const answers: Record<string, number> = {};
  for (const label of pairs.flatMap((p) => p.labels)) answers[label] = (answers[label] ?? 0) + 1;
  const valid = pairs.filter((p) => p.labels.every((label) => label === '401'));
  const gaps = valid.map((p) => p.known - p.unknown);
  const knownSlowerPairs = gaps.filter((gap) => gap > 0).length;
  return {
    pairs: valid.length,
    knownMs: spread(valid.map((p) => p.known)),
    unknownMs: spread(valid.map((p) => p.unknown)),
    gapMs: { ...spread(gaps), p10: round2(percentile(sorted(gaps), 10)) },
    knownSlowerPairs,
    signTestP: signTestP(knownSlowerPairs, gaps.length),
    answers,
    nextClient,
  };
}

export async function timingPhase(port: number, emails: string[], o: TimingOptions): Promise<TimingResult> {
  const session = await openSession(port);
  // One connection, kept alive: no attempt pays for a connection the other did not.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const total = o.warmupPairs + o.pairs;
  log(`timing: ${o.warmupPairs} warm-up + ${o.pairs} measured pairs of known/unknown email…`);
  const pairs: Pair[] = [];
  try {
    for (let i = 0; i < total; i++) {
      const result = await pair(session, agent, i, emails, o, i % 2 === 0);
      if (i >= o.warmupPairs) pairs.push(result);
    }
  } finally {
    agent.destroy();
  }
  return summarizePairs(pairs, o.firstClient + 2 * total);
}
