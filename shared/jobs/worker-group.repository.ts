import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import { execPipeline, type RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';

/**
 * The live workers of a deployment, in Redis (docs/adr/0015-worker-partition-ownership.md): each
 * worker beats every WORKER_HEARTBEAT_INTERVAL and learns who else is alive; a worker not heard
 * from for WORKER_HEARTBEAT_TIMEOUT is pruned by the next beat of any other.
 *
 * Last-seen times are the Redis server's clock, read inside the script
 * (shared/redis/lua/workerHeartbeat-2.lua), so workers on hosts whose clocks disagree never prune
 * each other early. Both keys are refreshed with every beat and expire when no worker beats for
 * twice the timeout.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosWorkerHeartbeat(
      heartbeats: string,
      partitions: string,
      workerId: string,
      owned: string,
      timeoutMs: number,
    ): Result<string[], Context>;
  }
}

export interface WorkerGroupState {
  /** Worker ids, each with the Redis time (ms) of its last heartbeat. */
  members: Array<{ id: string; lastSeen: number }>;
  /** The partitions each member reported consuming at its last heartbeat. */
  partitions: Map<string, number[]>;
}

/** How a worker's partitions are written in the group and in logs: `0,3,5`. */
export const formatPartitions = (partitions: readonly number[]) => partitions.join(',');
const parsePartitions = (text: string) => (text === '' ? [] : text.split(',').map(Number));

export class WorkerGroup {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<RedisKeys, 'workerHeartbeats' | 'workerPartitions' | 'workerGroupChanged'>,
  ) {
    defineScripts(redis, ['cosWorkerHeartbeat']);
  }

  /**
   * Records that `workerId` is alive and consumes `owned`, prunes the workers not seen within
   * `timeoutMs`, and returns the live workers' ids (this one included).
   */
  async heartbeat(workerId: string, owned: readonly number[], timeoutMs: number): Promise<string[]> {
    const { workerHeartbeats, workerPartitions } = this.keys;
    return this.redis.cosWorkerHeartbeat(workerHeartbeats, workerPartitions, workerId, formatPartitions(owned), timeoutMs);
  }

  /** Removes a stopping worker and tells the others, so that they take its partitions at once. */
  async leave(workerId: string): Promise<void> {
    await execPipeline(this.redis.multi().zrem(this.keys.workerHeartbeats, workerId).hdel(this.keys.workerPartitions, workerId));
    await this.announceChange();
  }

  /**
   * Tells the other workers that the group changed (this one joined or left): they beat at once
   * instead of at their next heartbeat, so that workers started together share the partitions
   * before either has taken much of the other's share.
   */
  async announceChange(): Promise<void> {
    await this.redis.publish(this.keys.workerGroupChanged, '1');
  }

  /** The group as Redis holds it (dead members not yet pruned included), for operators and benchmarks. */
  async read(): Promise<WorkerGroupState> {
    const [flat, reported] = (await execPipeline(
      this.redis.multi().zrange(this.keys.workerHeartbeats, 0, -1, 'WITHSCORES').hgetall(this.keys.workerPartitions),
    )) as [string[], Record<string, string>];
    const members = [];
    for (let i = 0; i < flat.length; i += 2) members.push({ id: flat[i]!, lastSeen: Number(flat[i + 1]) });
    return { members, partitions: new Map(Object.entries(reported).map(([id, text]) => [id, parsePartitions(text)])) };
  }
}

/** Calls `listener` whenever a worker announces a change of the group, on a subscriber connection of its own. */
export function onWorkerGroupChange(subscriber: RedisClient, keys: Pick<RedisKeys, 'workerGroupChanged'>, listener: () => void): void {
  subscriber.on('message', (channel: string) => {
    if (channel === keys.workerGroupChanged) listener();
  });
  // A lost subscription only makes the group change seen at the next heartbeat.
  subscriber.subscribe(keys.workerGroupChanged).catch(() => undefined);
}
