#!/usr/bin/env node
import { ConfigError, loadCliConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { createDb, DB_ROLES } from '../shared/db/database';
import { isDependencyUnavailable } from '../shared/errors/unavailable';
import { KeyNotFoundError, PlanLimitError } from '../shared/keys/key.service';
import { parseArgs, UsageError } from './args';
import { COMMANDS as OPERATOR_COMMANDS } from './commands';
import { PARTITION_COMMANDS } from './partition-commands';
import { USER_COMMANDS } from './user-commands';

const COMMANDS = { ...OPERATOR_COMMANDS, ...USER_COMMANDS, ...PARTITION_COMMANDS };

const USAGE = `usage: cos <command> [--json]
  accounts create --name N [--plan starter|pro|enterprise]
  accounts list
  accounts set-plan N starter|pro|enterprise [--live-keys K]
  accounts restrict N | accounts unrestrict N
  keys create --account N --env test|live [--name L] [--scopes context,outcome,profile] [--rps R]
  keys list --account N
  keys revoke ID | keys delete ID | keys rotate ID [--grace 24h]
  test-data reset [--account N]
  usage --account N [--month YYYY-MM] [--format json|csv]
  evaluate --account N --env live|test [--since DATE]
  jobs failed [--queue events|maintenance] [--limit N] | jobs retry-failed [--queue …]
  users create --account N --email E [--role owner|viewer] [--password-stdin]
  users list --account N
  users delete E | users reset-password E [--password-stdin]
  partitions list | partitions detach --before YYYY-MM`;

/** Runs one CLI command; returns the exit code. Output: one JSON object with --json. */
export interface CliIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Read by commands given --password-stdin. */
  input: NodeJS.ReadableStream;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

export async function runCli(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const { out = process.stdout, err = process.stderr, env = process.env, input = process.stdin } = io;
  const args = parseArgs(argv);
  const name = COMMANDS[args.positionals[0] ?? ''] ? args.positionals[0]! : args.positionals.slice(0, 2).join(' ');
  const command = COMMANDS[name];
  if (args.flags.has('help') || args.positionals.length === 0) {
    (args.flags.has('help') ? out : err).write(`${USAGE}\n`);
    return args.flags.has('help') ? 0 : 2;
  }
  if (!command) {
    err.write(`cos: unknown command "${args.positionals.join(' ')}"; run cos --help for the list\n`);
    return 2;
  }
  loadDotCosEnv(env);
  let db;
  try {
    const config = loadCliConfig(env);
    db = createDb(config.DATABASE_URL, DB_ROLES.tool);
    const result = await command({ db, config, args, readInput: () => readAll(input) });
    if (result.raw !== undefined) out.write(`${result.raw}\n`);
    else out.write(args.flags.get('json') ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    if (result.warning) err.write(`cos ${name}: warning: ${result.warning}\n`);
    return 0;
  } catch (error) {
    const known =
      error instanceof UsageError || error instanceof KeyNotFoundError || error instanceof PlanLimitError || error instanceof ConfigError;
    const message = error instanceof Error ? error.message : String(error);
    // Every command makes its change in Postgres first, in one transaction: one refused here
    // did not make it (a revocation included), and running it again is the remedy.
    const unreachable = !known && isDependencyUnavailable(error);
    err.write(
      `cos ${name}: ${
        known
          ? message.replace(/\n\s*/g, '; ')
          : unreachable
            ? `Postgres or Redis did not answer (${message.split('\n')[0]}); the command did not complete: run it again once it answers`
            : `failed: ${message.split('\n')[0]}`
      }\n`,
    );
    return known && error instanceof UsageError ? 2 : 1;
  } finally {
    await db?.destroy();
  }
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
