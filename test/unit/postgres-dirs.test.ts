import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postgresDataDir, socketDir, traversableBy } from '../../scripts/postgres-dirs';

/**
 * Where a local Postgres keeps its data when the user running it (the `postgres` user, when we
 * are root) may or may not enter the project's folder. "Someone else" is a uid and gid that own
 * none of the folders made here; os.tmpdir() and its parents are assumed open to everyone.
 */
describe('postgres data folder', () => {
  let scratch: string;
  let someoneElse: { uid: number; gid: number };
  const fallbackRoot = '/var/lib/cos-test-unused';

  beforeEach(() => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'cos-pgdirs-'));
    chmodSync(scratch, 0o755);
    const { uid, gid } = statSync(scratch);
    someoneElse = { uid: uid + 54_321, gid: gid + 54_321 };
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  function folder(name: string, mode: number): string {
    const dir = path.join(scratch, name);
    mkdirSync(dir);
    chmodSync(dir, mode);
    return dir;
  }

  it('stays in the project when the user running Postgres can enter every folder above it', () => {
    const dotCos = path.join(folder('project', 0o755), '.cos');
    mkdirSync(dotCos, { mode: 0o755 });
    const preferred = path.join(dotCos, 'pg');
    expect(postgresDataDir(preferred, someoneElse, fallbackRoot)).toBe(preferred);
  });

  it('moves under the fallback root when a folder above the project is closed to that user (a 0700 home)', () => {
    const home = folder('home', 0o700);
    const dotCos = path.join(home, 'cos', '.cos');
    mkdirSync(dotCos, { recursive: true, mode: 0o755 });
    const preferred = path.join(dotCos, 'pg');

    const chosen = postgresDataDir(preferred, someoneElse, fallbackRoot);
    expect(path.dirname(chosen)).toBe(fallbackRoot);
    // the same project finds the same data at its next start; another project gets its own
    expect(postgresDataDir(preferred, someoneElse, fallbackRoot)).toBe(chosen);
    const other = path.join(home, 'other', '.cos');
    mkdirSync(other, { recursive: true });
    expect(postgresDataDir(path.join(other, 'pg'), someoneElse, fallbackRoot)).not.toBe(chosen);
  });

  it('stays in the project when Postgres runs as ourselves', () => {
    const dotCos = path.join(folder('home', 0o700), '.cos');
    mkdirSync(dotCos);
    const preferred = path.join(dotCos, 'pg');
    expect(postgresDataDir(preferred, undefined, fallbackRoot)).toBe(preferred);
  });

  it('reads the owner, then the group, then everyone execute bit, as the kernel does', () => {
    const stats = statSync(scratch);
    const owner = { uid: stats.uid, gid: someoneElse.gid };
    const group = { uid: someoneElse.uid, gid: stats.gid };
    // the owner's bits decide for the owner even when everyone else may enter
    expect(traversableBy(folder('others-only', 0o001), owner)).toBe(false);
    expect(traversableBy(folder('owner-only', 0o100), owner)).toBe(true);
    expect(traversableBy(folder('group-only', 0o010), group)).toBe(true);
    expect(traversableBy(folder('group-closed', 0o701), group)).toBe(false);
    expect(traversableBy(folder('everyone', 0o701), someoneElse)).toBe(true);
    expect(traversableBy(folder('nobody-else', 0o770), someoneElse)).toBe(false);
  });

  it('puts the socket in the data folder only when its path fits the kernel limit', () => {
    expect(socketDir('/var/lib/cos/0123456789abcdef', 54321)).toBe('/var/lib/cos/0123456789abcdef');
    expect(socketDir(`/home/someone/${'deep/'.repeat(20)}cos/.cos/pg`, 54321)).toBe('');
  });
});
