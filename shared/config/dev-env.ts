import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The project folder (the nearest parent holding package.json). */
export function projectRoot(from = __dirname): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

export const runtimeEnvPath = (): string => path.join(projectRoot(), '.cos', 'runtime.env');

/**
 * `npm start` writes the connection settings of the local Postgres/Redis it started (and the
 * generated dev secret) to .cos/runtime.env, so `npm run cli` and `npm run migrate` in another
 * terminal talk to the same service. Used only when DATABASE_URL is not set; explicit
 * environment variables always win.
 */
export function loadDotCosEnv(env: NodeJS.ProcessEnv = process.env): void {
  if (env.DATABASE_URL) return;
  const file = runtimeEnvPath();
  if (!existsSync(file)) return;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match && env[match[1]!] === undefined) env[match[1]!] = match[2]!;
  }
}
