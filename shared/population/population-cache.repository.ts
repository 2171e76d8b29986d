import type { Result } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import { readPopulation } from '../domain/engine/engine';
import type { Tenant } from '../domain/environment';
import { execEach, type RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';
import type { StoredPopulation } from './population.repository';

/**
 * Redis copy of each tenant's population prior. Writes never replace a newer version
 * (shared/redis/lua/writePopulationIfNewer-1.lua): versions come from a Postgres sequence, so
 * whatever order workers (and resets) write in, the cache only moves forward.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosWritePopulationIfNewer(key: string, version: number, data: string): Result<number, Context>;
  }
}

export class PopulationCache {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    defineScripts(redis, ['cosWritePopulationIfNewer']);
  }

  async read(tenant: Tenant): Promise<StoredPopulation | null> {
    const [version, data] = await this.redis.hmget(this.keys.population(tenant), 'version', 'data');
    if (!version || !data) return null;
    return { version: Number(version), prior: readPopulation(JSON.parse(data)) };
  }

  /** The version of the tenant's cached prior, without the prior; null when there is no copy. */
  async readVersion(tenant: Tenant): Promise<number | null> {
    const version = await this.redis.hget(this.keys.population(tenant), 'version');
    return version ? Number(version) : null;
  }

  async writeManyIfNewer(entries: Array<{ tenant: Tenant; population: StoredPopulation }>): Promise<void> {
    await execEach(
      this.redis,
      entries.map(
        ({ tenant, population }) =>
          (pipeline) =>
            pipeline.cosWritePopulationIfNewer(this.keys.population(tenant), population.version, JSON.stringify(population.prior.sums)),
      ),
    );
  }
}
