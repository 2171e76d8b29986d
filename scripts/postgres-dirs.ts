import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';

/**
 * Where a local Postgres keeps its files. When we run as root, Postgres runs as the `postgres`
 * user (initdb refuses root), and a project inside a folder only root can enter (root's home
 * is 0700) is out of that user's reach: its data then lives under FALLBACK_ROOT instead.
 */
export interface PostgresUser {
  uid: number;
  gid: number;
}

/** The `postgres` user when we are root; undefined (ourselves) otherwise. */
export function postgresUser(): PostgresUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isFinite(uid) || uid <= 0) throw new Error('running as root needs a "postgres" system user to run PostgreSQL');
  return { uid, gid: id('-g') };
}

export const FALLBACK_ROOT = '/var/lib/cos';

/** The longest Unix-domain socket path the kernel accepts (sun_path less its terminating NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Whether `user` (never root) may enter `dir` and every folder above it: the owner's, else the
 * group's, else everyone's execute bit, as the kernel checks it for a process with that uid and
 * gid and no supplementary groups (how node spawns a child under another uid).
 */
export function traversableBy(dir: string, user: PostgresUser): boolean {
  const canEnter = (stats: Stats) => {
    const bit = stats.uid === user.uid ? 0o100 : stats.gid === user.gid ? 0o010 : 0o001;
    return (stats.mode & bit) !== 0;
  };
  for (let current = realpathSync(dir); ; current = path.dirname(current)) {
    if (!canEnter(statSync(current))) return false;
    if (current === path.dirname(current)) return true;
  }
}

/**
 * The data folder for a Postgres that would like to live in `preferred` (whose parent exists):
 * `preferred` itself when `user` (undefined: ourselves) can reach its parent, else a folder under
 * `fallbackRoot` named from a hash of preferred's real path, so every start of the same project
 * finds the same data.
 */
export function postgresDataDir(preferred: string, user: PostgresUser | undefined, fallbackRoot = FALLBACK_ROOT): string {
  const parent = realpathSync(path.dirname(preferred));
  if (!user || traversableBy(parent, user)) return preferred;
  const id = createHash('sha256')
    .update(path.join(parent, path.basename(preferred)))
    .digest('hex')
    .slice(0, 16);
  return path.join(fallbackRoot, id);
}

/**
 * The folder for Postgres's Unix socket: the data folder when the socket's path fits the
 * kernel's limit, else none (an empty string: TCP only — every URL we hand out is TCP).
 */
export function socketDir(dataDir: string, port: number): string {
  return Buffer.byteLength(path.join(dataDir, `.s.PGSQL.${port}`)) <= MAX_SOCKET_PATH ? dataDir : '';
}

/**
 * Creates the data folder chosen by postgresDataDir (the fallback root readable by everyone),
 * owned by `user`, and returns it.
 */
export function preparePostgresDataDir(preferred: string, user: PostgresUser | undefined, fallbackRoot = FALLBACK_ROOT): string {
  const dataDir = postgresDataDir(preferred, user, fallbackRoot);
  if (user && dataDir !== preferred) {
    if (!existsSync(fallbackRoot)) {
      mkdirSync(fallbackRoot, { recursive: true });
      chmodSync(fallbackRoot, 0o755);
    }
    if (!traversableBy(fallbackRoot, user)) {
      throw new Error(
        `the postgres user can reach neither ${path.dirname(preferred)} nor ${fallbackRoot}; ` +
          'make one of them reachable or set DATABASE_URL',
      );
    }
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (user && statSync(dataDir).uid !== user.uid) chownSync(dataDir, user.uid, user.gid);
  return dataDir;
}
