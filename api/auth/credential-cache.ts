import type { Db } from '../../shared/db/database';
import { credentialsWatermark, findCredentialByHash, touchLastUsed, type KeyCredential } from '../../shared/credentials/key.repository';
import type { CredentialChange, CredentialChangeListener } from '../../shared/credentials/credential-changes.repository';
import type { Logger } from '../../shared/logger/logger';
import { isDependencyUnavailable } from '../../shared/errors/unavailable';

const POSITIVE_TTL_MS = 60_000;
const NEGATIVE_TTL_MS = 1_000;
const MAX_ENTRIES = 50_000;
/** How long a cached valid key is still honoured while Postgres cannot be reached… */
export const STALE_GRACE_MS = 10 * 60_000;
/**
 * …and how long while this instance follows the stream of key changes: every revocation,
 * deletion and restriction still reaches it within about a second, so the entry can be trusted
 * for longer (docs/adr/0018-deadlines.md).
 */
export const FOLLOWED_GRACE_MS = 24 * 3_600_000;
/** The change stream counts as followed while its last read returned this recently. */
const FOLLOWED_WITHIN_MS = 5_000;

/** Tells the cache about Postgres as the process's dependency watch sees it. */
export interface PostgresState {
  /** Whether Postgres is known to be away: a cached key is then used without asking it. */
  down(): boolean;
  /** A lookup failed on an unreachable Postgres. */
  failed(error: unknown): void;
}

export interface CredentialCacheDeps {
  db: Db;
  logger: Logger;
  /** How often the watermark of key and account changes is polled (ms). */
  refreshMs: number;
  /** Ages the entries (injected in tests to cross the grace period); Date.now by default. */
  clock?: () => number;
  /** The process's view of Postgres; without it Postgres is never taken to be down. */
  postgres?: PostgresState;
}

/**
 * In-process cache of key credentials so the hot path never reads Postgres
 * (docs/adr/0004-credential-cache.md). A revocation, deletion or restriction made with the CLI
 * is announced on Redis and applied to the cached credentials at once (`apply`), whether or
 * not this instance reaches Postgres. Each instance also polls a watermark (latest change to
 * any key or account) every `refreshMs` and, when it moves, asks Postgres again for every key
 * before trusting its entry: any change, announced or not, takes effect within refreshMs plus
 * one poll (≤ 2 s with the 1 s default) while Postgres is reachable. Such an entry stays the
 * fallback should Postgres be unreachable when asked, as an aged one does: a key created or
 * changed anywhere just before an outage must not turn every other key away.
 */
export class CredentialCache implements CredentialChangeListener {
  private readonly entries = new Map<string, { credential: KeyCredential | null; at: number; generation: number }>();
  private readonly inflight = new Map<string, Promise<KeyCredential | null>>();
  /** Epoch ms each key was last used, until written (a number: no Date per request). */
  private readonly lastUsed = new Map<string, number>();
  private watermark: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ticks = 0;
  /** Bumped whenever the cache is cleared or invalidated; a lookup that raced either is not cached. */
  private epoch = 0;
  /** Bumped when the watermark moves: entries of an earlier generation are asked for again. */
  private generation = 0;
  /** When a read of the change stream last returned (epoch ms). */
  private followedAt = -Infinity;
  /** Changes may have been trimmed from the stream unread: not followed until Postgres is polled again. */
  private missedChanges = false;

  private readonly db: Db;
  private readonly logger: Logger;
  private readonly refreshMs: number;
  private readonly clock: () => number;
  private readonly postgres: PostgresState;

  constructor(deps: CredentialCacheDeps) {
    ({
      db: this.db,
      logger: this.logger,
      refreshMs: this.refreshMs,
      clock: this.clock = Date.now,
      postgres: this.postgres = { down: () => false, failed: () => undefined },
    } = deps);
  }

  /** Starts polling; resolves once the first poll has finished (tests wait for it). */
  start(): Promise<void> {
    let first: () => void = () => undefined;
    const polled = new Promise<void>((resolve) => (first = resolve));
    const tick = () => {
      void this.poll().finally(() => {
        first();
        if (this.timer) this.timer = setTimeout(tick, this.refreshMs);
      });
    };
    this.timer = setTimeout(tick, 0);
    return polled;
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushLastUsed();
  }

  /**
   * The cached answer for a key, when it is fresh: the credential, or null for an unknown key;
   * undefined when only `lookup` can tell. Lets the hot path answer without a promise.
   */
  peek(hashHex: string, now = this.clock()): KeyCredential | null | undefined {
    const cached = this.entries.get(hashHex);
    if (!cached || cached.generation !== this.generation) return undefined;
    if (now - cached.at < (cached.credential ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS)) return cached.credential;
    return undefined;
  }

  async lookup(hashHex: string, keyHash: Buffer, now = this.clock()): Promise<KeyCredential | null> {
    const fresh = this.peek(hashHex, now);
    if (fresh !== undefined) return fresh;
    const cached = this.entries.get(hashHex);
    // Postgres is known to be away: asking it would only make the request wait for its deadline.
    if (cached?.credential && this.postgres.down() && this.withinGrace(cached, now)) return cached.credential;
    const epoch = this.epoch;
    let pending = this.inflight.get(hashHex);
    if (!pending) {
      pending = findCredentialByHash(this.db, keyHash).finally(() => this.inflight.delete(hashHex));
      this.inflight.set(hashHex, pending);
    }
    let credential: KeyCredential | null;
    try {
      credential = await pending;
    } catch (error) {
      // Postgres unreachable: a key known to be valid a little while ago keeps working.
      if (isDependencyUnavailable(error)) this.postgres.failed(error);
      if (cached?.credential && this.withinGrace(cached, now)) return cached.credential;
      throw error;
    }
    if (epoch !== this.epoch) return credential; // answered, but possibly from before a change
    if (this.entries.size >= MAX_ENTRIES) this.clear();
    this.entries.set(hashHex, { credential, at: this.clock(), generation: this.generation });
    return credential;
  }

  /**
   * Applies an announced change to the cached credentials it concerns, keeping their age, so a
   * revoked key is refused even when its entry is served through the grace period. A lookup in
   * flight may predate the change: its answer is not cached.
   */
  apply(change: CredentialChange): void {
    this.epoch++;
    for (const [hashHex, entry] of this.entries) {
      const credential = entry.credential;
      if (!credential) continue;
      if (change.type === 'key' && credential.id === change.keyId) {
        const { revokedAt = credential.revokedAt, deletedAt = credential.deletedAt } = change;
        this.entries.set(hashHex, { ...entry, credential: { ...credential, revokedAt, deletedAt } });
      } else if (change.type === 'account' && credential.accountId === change.accountId) {
        this.entries.set(hashHex, { ...entry, credential: { ...credential, restricted: change.restricted } });
      }
    }
  }

  /** A read of the change stream returned. */
  followed(at: number): void {
    this.followedAt = at;
  }

  /** Changes were trimmed from the stream before this instance read them: every entry is asked for again. */
  missed(): void {
    this.missedChanges = true;
    this.invalidate();
  }

  /** Whether the change stream is followed at `now`: a read returned lately, and none was missed since Postgres was last polled. */
  following(now = this.clock()): boolean {
    return !this.missedChanges && now - this.followedAt < FOLLOWED_WITHIN_MS;
  }

  /**
   * Whether an entry may still stand in for Postgres. The long grace needs both: the stream is
   * followed, and the entry was confirmed since the watermark last moved — a change made without
   * an announcement (in SQL, or while Redis was away) moved the watermark and may concern it.
   */
  private withinGrace(entry: { at: number; generation: number }, now: number): boolean {
    const confirmed = this.following(now) && entry.generation === this.generation;
    return now - entry.at < (confirmed ? FOLLOWED_GRACE_MS : STALE_GRACE_MS);
  }

  private clear(): void {
    this.entries.clear();
    this.epoch++;
  }

  /** Every entry is asked for again before it is trusted, and kept meanwhile as the fallback while Postgres is unreachable. */
  private invalidate(): void {
    this.generation++;
    this.epoch++;
  }

  markUsed(keyId: string, at: number): void {
    this.lastUsed.set(keyId, at);
  }

  /** Checks the watermark; every fifth tick also writes lastUsedAt in one statement. */
  async poll(): Promise<void> {
    try {
      const mark = await credentialsWatermark(this.db);
      // Entries cached before the first observation have no baseline to compare with.
      if (mark !== this.watermark) this.invalidate();
      this.watermark = mark;
      // Postgres has been asked since the missed changes: they are in what it answers.
      this.missedChanges = false;
    } catch (error) {
      // An unreachable Postgres is the watch's to log, once per outage.
      if (isDependencyUnavailable(error)) this.postgres.failed(error);
      else this.logger.warn({ err: error }, 'could not check key changes; cached credentials kept');
    }
    if (++this.ticks % 5 === 0) await this.flushLastUsed();
  }

  private async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = new Map([...this.lastUsed].map(([keyId, at]) => [keyId, new Date(at)]));
    this.lastUsed.clear();
    try {
      await touchLastUsed(this.db, batch);
    } catch (error) {
      if (isDependencyUnavailable(error)) this.postgres.failed(error);
      else this.logger.warn({ err: error }, 'could not record key lastUsedAt');
    }
  }
}
