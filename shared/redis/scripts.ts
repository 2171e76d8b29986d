import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, type RedisCommander } from 'ioredis';
import { isCommandTimeout } from '../errors/unavailable';
import type { RedisClient } from './redis';

/**
 * The service's Redis scripts, kept as BullMQ keeps its own (docs/ARCHITECTURE.md#redis-scripts):
 * one Lua file per script in shared/redis/lua/, named `<name>-<numberOfKeys>.lua`, its header
 * listing its KEYS, ARGV and reply. `npm run build` copies the folder beside this module in
 * dist/, so a copy of dist/ alone runs its own scripts.
 */
export const LUA_DIR = path.join(__dirname, 'lua');

/**
 * The typed signatures of the scripts sent only through sendScript, never defined on a client:
 * each is an augmentation of this interface beside its caller.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface SentScripts {}

/** A script defined on a client (defineScripts): its typed signature augments ioredis's `RedisCommander` beside its caller. */
export type DefinedCommand = Extract<keyof RedisCommander, `cos${string}`>;

/** Every script's signature, defined or only sent. */
type ScriptSignatures = Pick<RedisCommander, DefinedCommand> & SentScripts;

/** A script's command: `cos` and its file's name, `limitAndMeter-4.lua` → `cosLimitAndMeter`. */
export type ScriptCommand = keyof ScriptSignatures;

export interface LuaScript {
  command: string;
  /** From the file name; undefined for a script whose caller passes the key count first. */
  numberOfKeys: number | undefined;
  /** The file's text with its includes resolved. */
  lua: string;
}

const SCRIPT_FILE = /^([a-z][A-Za-z0-9]*)(?:-(\d+))?\.lua$/;
/** A line `--- @include "<name>"` stands for includes/<name>.lua (BullMQ's directive). */
const INCLUDE = /^--- @include "([A-Za-z0-9]+)"\s*$/;

/**
 * Every script of `dir`, by command. Fails on a misnamed file or a missing or circular include,
 * so that a broken script stops a process at start rather than at its first call.
 */
export function loadScripts(dir: string = LUA_DIR): Map<string, LuaScript> {
  const scripts = new Map<string, LuaScript>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
    const match = SCRIPT_FILE.exec(entry.name);
    if (!match) throw new Error(`${path.join(dir, entry.name)}: a script's file is named <name>-<numberOfKeys>.lua`);
    const name = match[1]!;
    const keys = match[2];
    const command = `cos${name[0]!.toUpperCase()}${name.slice(1)}`;
    scripts.set(command, {
      command,
      numberOfKeys: keys === undefined ? undefined : Number(keys),
      lua: resolveIncludes(dir, entry.name),
    });
  }
  return scripts;
}

/**
 * The script's text with each include directive replaced by the included file (itself resolved
 * the same way). An include already inserted earlier in the script is dropped: includes define
 * local functions and constants, which Lua needs once, before their first use.
 */
export function resolveIncludes(dir: string, file: string): string {
  const inserted = new Set<string>();
  const expand = (text: string, chain: string[]): string =>
    text
      .split('\n')
      .map((line) => {
        const name = INCLUDE.exec(line)?.[1];
        if (name === undefined) return line;
        if (chain.includes(name)) throw new Error(`${file}: circular include ${[...chain, name].join(' → ')}`);
        if (inserted.has(name)) return '';
        inserted.add(name);
        let included: string;
        try {
          included = readFileSync(path.join(dir, 'includes', `${name}.lua`), 'utf8');
        } catch (error) {
          throw new Error(`${file}: cannot include "${name}" (includes/${name}.lua)`, { cause: error });
        }
        return expand(included.replace(/\n$/, ''), [...chain, name]);
      })
      .join('\n');
  return expand(readFileSync(path.join(dir, file), 'utf8'), []);
}

let library: Map<string, LuaScript> | undefined;
const defined = new WeakMap<RedisClient, Set<string>>();

/**
 * Defines `commands` on `redis` once per client, each as ioredis runs a defined command: the
 * script's text with EVAL on a connection's first call, then EVALSHA. Only the caller's scripts:
 * a client's pipelines copy every script defined on it when they are made.
 */
export function defineScripts(redis: RedisClient, commands: readonly DefinedCommand[]): void {
  let done = defined.get(redis);
  if (!done) defined.set(redis, (done = new Set()));
  for (const command of commands) {
    if (done.has(command)) continue;
    const { numberOfKeys, lua } = libraryScript(command);
    redis.defineCommand(command, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
    done.add(command);
  }
}

/** What a script command replies: its typed signature's (the augmentation beside its caller). */
export type ScriptReply<C extends ScriptCommand> = Awaited<ReturnType<ScriptSignatures[C]>>;

/** The library's script of `command` (the folder read once per process). */
function libraryScript(command: ScriptCommand): LuaScript {
  library ??= loadScripts();
  const script = library.get(command);
  if (!script) throw new Error(`${command}: no script for it in ${LUA_DIR}`);
  return script;
}

/** A script with a key count, with its SHA-1 (what EVALSHA names it by), for sendScript. */
const withSha = new Map<string, LuaScript & { numberOfKeys: number; sha: string }>();
function scriptOf(command: ScriptCommand): LuaScript & { numberOfKeys: number; sha: string } {
  let script = withSha.get(command);
  if (script) return script;
  const { numberOfKeys, lua } = libraryScript(command);
  if (numberOfKeys === undefined) throw new Error(`${command}: sendScript needs a key count in the script's file name`);
  withSha.set(command, (script = { command, numberOfKeys, lua, sha: createHash('sha1').update(lua).digest('hex') }));
  return script;
}

/**
 * Runs `command` (its keys, then its arguments) as EVALSHA, then as EVAL when Redis does not hold
 * the script, and resolves with its reply; when that reply comes after the client gave up waiting
 * (its command timeout), it goes to `late`. A command that timed out was sent: Redis runs it once
 * it answers again, and what it did there may need settling. A command that never reaches Redis
 * (refused unsent, or flushed with a lost connection) never replies.
 */
export function sendScript<C extends ScriptCommand>(
  redis: RedisClient,
  command: C,
  keysThenArgs: Parameters<ScriptSignatures[C]>,
  late: (reply: ScriptReply<C>) => void,
): Promise<ScriptReply<C>> {
  type Reply = ScriptReply<C>;
  const { sha, lua, numberOfKeys } = scriptOf(command);
  const send = (name: 'evalsha' | 'eval'): Promise<Reply> => {
    const sent = new Command(name, [name === 'evalsha' ? sha : lua, numberOfKeys, ...keysThenArgs], { replyEncoding: 'utf8' });
    let timedOut = false;
    const { resolve, reject } = sent;
    sent.reject = (error) => {
      timedOut = isCommandTimeout(error);
      reject(error);
    };
    sent.resolve = (reply) => {
      if (timedOut) settleLate(() => late(sent.transformReply(reply) as Reply));
      resolve(reply);
    };
    return redis.sendCommand(sent) as Promise<Reply>;
  };
  return send('evalsha').catch((error: unknown) => {
    if (!/NOSCRIPT/.test(String((error as { message?: unknown }).message))) throw error;
    return send('eval');
  });
}

/**
 * Runs a late reply's handler where the client reads its socket: a handler that throws (a reply it
 * cannot read) settles nothing, as a reply that never came, rather than take the process down.
 */
function settleLate(handle: () => void): void {
  try {
    handle();
  } catch {
    // Nothing to settle from a reply the caller cannot read.
  }
}
