import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startLocalServices, type LocalServices } from '../../scripts/local-services';

/**
 * Starts throwaway Postgres and Redis on free ports (unless DATABASE_URL / REDIS_URL are
 * given), migrates a template database once with the built `npm run migrate`, and hands the
 * URLs to the test files through the environment.
 */
export default async function globalSetup(): Promise<void> {
  // Run once per jest run, by whichever project's setup comes first (cluster-global-setup.ts).
  if ((globalThis as { __COS_TEARDOWN__?: unknown }).__COS_TEARDOWN__) return;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cos-test-'));
  chmodSync(dir, 0o755); // the postgres user must reach its data folder inside
  const services: LocalServices = await startLocalServices(dir, {
    databaseUrl: process.env.DATABASE_URL,
    redisUrl: process.env.REDIS_URL,
    durable: false,
  }).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  // The teardown stops the services and removes their throwaway data (jest does not run it
  // when this setup fails, so a failure below does the same).
  const teardown = async () => {
    delete (globalThis as { __COS_TEARDOWN__?: unknown }).__COS_TEARDOWN__;
    await services.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  (globalThis as { __COS_TEARDOWN__?: () => Promise<void> }).__COS_TEARDOWN__ = teardown;
  try {
    const template = `cos_template_${process.pid}`;
    const admin = new Client({ connectionString: services.databaseUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${template}`);
    await admin.query(`create database ${template}`);
    await admin.end();
    const templateUrl = withDatabase(services.databaseUrl, template);
    const migrate = spawnSync(process.execPath, [path.join(__dirname, '../../dist/shared/db/migrate.main.js')], {
      env: { ...process.env, DATABASE_URL: templateUrl },
      encoding: 'utf8',
    });
    if (migrate.status !== 0) throw new Error(`migration of the template database failed: ${migrate.stderr}${migrate.stdout}`);

    process.env.COS_TEST_ADMIN_URL = services.databaseUrl;
    process.env.COS_TEST_TEMPLATE_DB = template;
    process.env.COS_TEST_REDIS_URL = services.redisUrl;
  } catch (error) {
    await teardown();
    throw error;
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
