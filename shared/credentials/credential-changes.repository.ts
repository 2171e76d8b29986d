import { z } from 'zod';
import type { RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';

/**
 * Key and account changes announced on a Redis stream by the command that made them in Postgres
 * (docs/adr/0004-credential-cache.md). Every API instance reads the stream from where it last
 * read — also an instance that cannot reach Postgres — and applies each change to its credential
 * cache at once. Unlike a pub/sub message, an entry is not lost while an instance reconnects: it
 * reads on from its last entry id once Redis answers again.
 */
export const credentialChangeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('key'), keyId: z.string(), revokedAt: z.iso.datetime().optional(), deletedAt: z.iso.datetime().optional() }),
  z.object({ type: z.literal('account'), accountId: z.string(), restricted: z.boolean() }),
]);
export type CredentialChange = z.infer<typeof credentialChangeSchema>;

/** Entries the stream keeps (about): far more changes than an instance misses while it reconnects. */
const STREAM_LENGTH = 10_000;
/** How long one read waits for new entries before it returns empty (and counts as a heartbeat). */
const READ_BLOCK_MS = 1_000;
/** A read that returns this long after the one before was held up: trimming is checked. */
const GAP_MS = 3 * READ_BLOCK_MS;

export async function publishCredentialChange(redis: RedisClient, keys: RedisKeys, change: CredentialChange): Promise<void> {
  await redis.xadd(keys.credentialChanges, 'MAXLEN', '~', STREAM_LENGTH, '*', 'change', JSON.stringify(change));
}

/** What the reader tells the credential cache. */
export interface CredentialChangeListener {
  /** A change announced. */
  apply(change: CredentialChange): void;
  /** A read returned (with entries or none): the stream is followed up to now. */
  followed(at: number): void;
  /** Entries were trimmed before this instance read them: changes may have been missed. */
  missed(): void;
}

export interface CredentialChangesDeps {
  /** A connection of the reader's own: its blocking reads hold it. */
  reader: RedisClient;
  keys: RedisKeys;
  listener: CredentialChangeListener;
  /** Times the reads, to tell a held-up one (injected in tests); Date.now by default. */
  clock?: () => number;
}

type StreamReply = Array<[string, Array<[string, string[]]>]> | null;

/**
 * The API side: reads the stream on a connection of its own (a blocking read holds it) from the
 * entry after the last one read, and hands each well-formed change to the listener.
 */
export class CredentialChanges {
  private lastId: string | null = null;
  private stopped = false;

  private readonly reader: RedisClient;
  private readonly keys: RedisKeys;
  private readonly listener: CredentialChangeListener;
  private readonly clock: () => number;

  constructor(deps: CredentialChangesDeps) {
    ({ reader: this.reader, keys: this.keys, listener: this.listener, clock: this.clock = Date.now } = deps);
    void this.follow();
  }

  private async follow(): Promise<void> {
    let failed = false;
    let returnedAt = this.clock();
    while (!this.stopped) {
      try {
        if (this.lastId === null) this.lastId = await this.newestId();
        else if (failed && (await this.trimmedPast(this.lastId))) this.listener.missed();
        failed = false;
        const readFrom = this.lastId;
        const reply = (await this.reader.xread(
          'COUNT',
          1000,
          'BLOCK',
          READ_BLOCK_MS,
          'STREAMS',
          this.keys.credentialChanges,
          this.lastId,
        )) as StreamReply;
        for (const [, entries] of reply ?? []) {
          for (const [id, fields] of entries) {
            this.lastId = id;
            const change = parseChange(fields);
            if (change) this.listener.apply(change);
          }
        }
        // A read that took far longer than it blocks was held by a connection that went away
        // (ioredis sends it again on reconnect) or a Redis that hung: entries may have been
        // trimmed meanwhile without an error to tell.
        const previous = returnedAt;
        returnedAt = this.clock();
        if (returnedAt - previous > GAP_MS && (await this.trimmedPast(readFrom))) this.listener.missed();
        this.listener.followed(returnedAt);
      } catch {
        failed = true;
        if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** The id of the stream's newest entry ('0-0' when empty): reading starts after it. */
  private async newestId(): Promise<string> {
    const newest = (await this.reader.xrevrange(this.keys.credentialChanges, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
    return newest[0]?.[0] ?? '0-0';
  }

  /** Whether the oldest entry kept is newer than the one after `lastId`: some were trimmed unread. */
  private async trimmedPast(lastId: string): Promise<boolean> {
    const oldest = (await this.reader.xrange(this.keys.credentialChanges, '-', '+', 'COUNT', 1)) as Array<[string, string[]]>;
    const first = oldest[0]?.[0];
    return first !== undefined && lastId !== '0-0' && compareIds(first, lastId) > 0 && !(await this.stillHas(lastId));
  }

  private async stillHas(id: string): Promise<boolean> {
    const found = (await this.reader.xrange(this.keys.credentialChanges, id, id)) as Array<[string, string[]]>;
    return found.length > 0;
  }

  /** Stops reading; a read in flight ends with the connection. */
  close(): void {
    this.stopped = true;
    this.reader.disconnect();
  }
}

function parseChange(fields: string[]): CredentialChange | null {
  const index = fields.indexOf('change');
  if (index < 0 || index % 2 !== 0) return null;
  try {
    const parsed = credentialChangeSchema.safeParse(JSON.parse(fields[index + 1] ?? ''));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Orders two stream ids (`ms-seq`). */
function compareIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number);
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number);
  return aMs !== bMs ? aMs - bMs : aSeq - bSeq;
}
