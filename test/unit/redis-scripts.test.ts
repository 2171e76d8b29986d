import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WINDOW_MICROS } from '../../shared/limits/sliding-window';
import { projectRoot } from '../../shared/config/dev-env';
import { loadScripts, LUA_DIR, resolveIncludes, type ScriptCommand } from '../../shared/redis/scripts';

/**
 * The Redis scripts live in shared/redis/lua/, one file each, named with their key count and
 * headed by their KEYS, ARGV and reply; shared/redis/scripts.ts loads them.
 */

/** Every typed script command: the compiler fails this list when a signature is added or removed. */
const TYPED: Record<ScriptCommand, true> = {
  cosAddTraffic: true,
  cosClaimKeyThenOutcome: true,
  cosClaimOutcome: true,
  cosClaimThenReadProfile: true,
  cosIdempotencyComplete: true,
  cosIdempotencyRelease: true,
  cosLeaseAdmissions: true,
  cosLimitAndMeter: true,
  cosLimitClaimThenReadProfile: true,
  cosLimitThenReadProfile: true,
  cosMeterCounts: true,
  cosMeterRefused: true,
  cosPutProfileIfAbsent: true,
  cosReadProfileFresh: true,
  cosReserveSignIn: true,
  cosSnapshotPeriod: true,
  cosWorkerHeartbeat: true,
  cosWritePopulationIfNewer: true,
  cosWriteProfileIfNewer: true,
};

const scriptFiles = readdirSync(LUA_DIR).filter((name) => name.endsWith('.lua'));
const includeFiles = readdirSync(path.join(LUA_DIR, 'includes')).filter((name) => name.endsWith('.lua'));
const read = (...parts: string[]) => readFileSync(path.join(LUA_DIR, ...parts), 'utf8');

/** The leading `--[[ … ]]` comment of a script, and the code after it. */
function split(text: string): { header: string; body: string } {
  const match = /^--\[\[\n([\s\S]*?)\n\]\]\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error('no header comment');
  return { header: match[1]!, body: match[2]! };
}
const indices = (text: string, array: 'KEYS' | 'ARGV') =>
  new Set([...text.matchAll(new RegExp(`\\b${array}\\[(\\d+)\\]`, 'g'))].map((match) => Number(match[1])));
/** Whether the header lists `KEYS[n]` (or ARGV) as an entry of its own line. */
const lists = (header: string, array: 'KEYS' | 'ARGV', n: number) => new RegExp(`^\\s*${array}\\[${n}\\]\\s`, 'm').test(header);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

describe('Redis scripts', () => {
  it('no TypeScript file of the service holds Lua: scripts live in shared/redis/lua/', () => {
    const root = projectRoot();
    const withLua = ['api', 'shared', 'worker', 'dashboard']
      .flatMap((dir) => sourceFiles(path.join(root, dir)))
      .filter((file) => /redis\.p?call\(/.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(root, file));
    expect(withLua).toEqual([]);
  });

  it('each file is one typed command, its key count in its name', () => {
    const scripts = loadScripts();
    expect([...scripts.keys()].sort()).toEqual(Object.keys(TYPED).sort());
    expect(scripts.get('cosLimitThenReadProfile')?.numberOfKeys).toBe(6);
    expect(scripts.get('cosAddTraffic')?.numberOfKeys).toBe(2);
    // The sign-in throttle's key count varies by call: its caller passes it.
    expect(scripts.get('cosReserveSignIn')?.numberOfKeys).toBeUndefined();
  });

  it.each(scriptFiles)('%s: its header lists each of its KEYS and ARGV, and its output', (file) => {
    const { header, body } = split(read(file));
    const numberOfKeys = /-(\d+)\.lua$/.exec(file)?.[1];
    const keys = indices(body, 'KEYS');
    if (numberOfKeys !== undefined) {
      for (let n = 1; n <= Number(numberOfKeys); n++)
        expect({ file, key: n, listed: lists(header, 'KEYS', n) }).toMatchObject({ listed: true });
      expect(Math.max(0, ...keys)).toBeLessThanOrEqual(Number(numberOfKeys));
    }
    for (const n of keys) expect({ file, key: n, listed: lists(header, 'KEYS', n) }).toMatchObject({ listed: true });
    for (const n of indices(body, 'ARGV')) expect({ file, arg: n, listed: lists(header, 'ARGV', n) }).toMatchObject({ listed: true });
    expect(header).toMatch(/^ {2}Output:$/m);
  });

  it.each(includeFiles)('includes/%s: documented, used, and free of KEYS and ARGV (its caller passes them)', (file) => {
    const { body } = split(read('includes', file));
    expect(body).not.toMatch(/\b(KEYS|ARGV)\b/);
    const name = file.replace(/\.lua$/, '');
    const users = [...scriptFiles.map((f) => read(f)), ...includeFiles.map((f) => read('includes', f))];
    expect(users.some((text) => text.includes(`--- @include "${name}"`))).toBe(true);
  });

  it("the limiter's window in Lua is sliding-window.ts's", () => {
    expect(read('includes', 'slidingWindow.lua')).toContain(`local WINDOW_MICROS = ${WINDOW_MICROS}\n`);
  });
});

describe('the script loader', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cos-lua-'));
    mkdirSync(path.join(dir, 'includes'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (file: string, text: string) => writeFileSync(path.join(dir, file), text);

  it('replaces each include by its file, nested ones first, each once per script', () => {
    write('includes/clock.lua', 'local function clock() return 1 end\n');
    write('includes/a.lua', '--- @include "clock"\nlocal function a() return clock() end\n');
    write('includes/b.lua', '--- @include "clock"\nlocal function b() return clock() + 1 end\n');
    write('both-1.lua', '--- @include "a"\n--- @include "b"\nreturn a() + b()\n');
    expect(resolveIncludes(dir, 'both-1.lua')).toBe(
      [
        'local function clock() return 1 end',
        'local function a() return clock() end',
        '',
        'local function b() return clock() + 1 end',
        'return a() + b()',
        '',
      ].join('\n'),
    );
  });

  it('names each command after its file, with the key count the name gives', () => {
    write('writeThing-3.lua', 'return 1\n');
    write('anyKeys.lua', 'return #KEYS\n');
    write('README.md', 'not a script');
    const scripts = loadScripts(dir);
    expect([...scripts.values()].sort((a, b) => a.command.localeCompare(b.command))).toEqual([
      { command: 'cosAnyKeys', numberOfKeys: undefined, lua: 'return #KEYS\n' },
      { command: 'cosWriteThing', numberOfKeys: 3, lua: 'return 1\n' },
    ]);
  });

  it('fails on a missing or circular include, and on a misnamed file', () => {
    write('missing-1.lua', '--- @include "nowhere"\nreturn 1\n');
    expect(() => resolveIncludes(dir, 'missing-1.lua')).toThrow('missing-1.lua: cannot include "nowhere"');
    write('includes/x.lua', '--- @include "y"\n');
    write('includes/y.lua', '--- @include "x"\n');
    write('loop-1.lua', '--- @include "x"\n');
    expect(() => resolveIncludes(dir, 'loop-1.lua')).toThrow('loop-1.lua: circular include x → y → x');
    rmSync(path.join(dir, 'missing-1.lua'));
    rmSync(path.join(dir, 'loop-1.lua'));
    write('Bad_name.lua', 'return 1\n');
    expect(() => loadScripts(dir)).toThrow("a script's file is named <name>-<numberOfKeys>.lua");
  });
});
