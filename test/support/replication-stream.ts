import net from 'node:net';
import { Redis } from 'ioredis';
import { eventually } from './harness';
import { RespCommandReader } from './resp-commands';

/** A command as a node propagated it: its name (upper case) and arguments. */
export interface PropagatedCommand {
  name: string;
  args: string[];
}

/**
 * What a Redis node propagates to its replicas — the same commands its append-only file
 * receives — read by connecting to it as a replica would (`PSYNC ? -1`): the snapshot of a full
 * resynchronisation is skipped, and every command after it is kept.
 */
export class ReplicationStream {
  readonly commands: PropagatedCommand[] = [];
  /** The node's replication offset at the snapshot, and the stream's bytes read since. */
  private startOffset = -1;
  private streamBytes = 0;
  private pending: Buffer = Buffer.alloc(0);
  /** The snapshot's bytes still to skip; -1 until its size is known. */
  private snapshotLeft = -1;
  private synced = false;
  private readonly reader = new RespCommandReader((name, args) => this.commands.push({ name, args }));

  private constructor(
    private readonly socket: net.Socket,
    private readonly node: Redis,
  ) {}

  /** Connects to the node at `host:port` as a replica; resolves once its snapshot has been skipped. */
  static async open(address: string): Promise<ReplicationStream> {
    const [host = '127.0.0.1', port] = address.split(':');
    const socket = net.connect(Number(port), host);
    const stream = new ReplicationStream(socket, new Redis(Number(port), host, { maxRetriesPerRequest: null }));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.on('data', (chunk: Buffer) => {
        try {
          if (stream.read(chunk)) resolve();
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      socket.write('PSYNC ? -1\r\n');
    });
    return stream;
  }

  /** Resolves once every command the node propagated before this call has been read. */
  async caughtUp(): Promise<void> {
    const info = await this.node.info('replication');
    const target = Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
    await eventually(async () => this.startOffset + this.streamBytes >= target, 5_000, 10);
  }

  /** The commands read so far that name `key` among their arguments. */
  touching(key: string): PropagatedCommand[] {
    return this.commands.filter((command) => command.args.includes(key));
  }

  async close(): Promise<void> {
    this.socket.destroy();
    this.node.disconnect();
  }

  /** Takes a chunk of the connection; true once the snapshot has been skipped. */
  private read(chunk: Buffer): boolean {
    if (this.synced) {
      this.streamBytes += chunk.length;
      this.reader.push(chunk);
      return true;
    }
    this.pending = Buffer.concat([this.pending, chunk]);
    for (;;) {
      if (this.snapshotLeft >= 0) {
        const taken = Math.min(this.snapshotLeft, this.pending.length);
        this.snapshotLeft -= taken;
        this.pending = this.pending.subarray(taken);
        if (this.snapshotLeft > 0) return false;
        this.synced = true;
        return this.read(this.pending);
      }
      // Before its snapshot a node sends newlines to keep the connection alive.
      while (this.pending[0] === 0x0a) this.pending = this.pending.subarray(1);
      const end = this.pending.indexOf('\r\n');
      if (end < 0) return false;
      const line = this.pending.subarray(0, end).toString('latin1');
      this.pending = this.pending.subarray(end + 2);
      const resync = /^\+FULLRESYNC \S+ (\d+)$/.exec(line);
      const snapshot = /^\$(\d+)$/.exec(line);
      if (resync) this.startOffset = Number(resync[1]);
      else if (snapshot) this.snapshotLeft = Number(snapshot[1]);
      else throw new Error(`unexpected reply to PSYNC: ${line}`);
    }
  }
}
