#!/usr/bin/env node
import { ConfigError, loadCliConfig } from '../shared/config/config';
import { loadDotCosEnv } from '../shared/config/dev-env';
import { createDb, DB_ROLES } from '../shared/db/database';
import { isDependencyUnavailable } from '../shared/errors/unavailable';
import { KeyNotFoundError, PlanLimitError } from '../shared/credentials/key.service';
import { AppError } from '../shared/errors/app-error';
import { CommandLineError, readCommandLine } from './command-line';
import { UsageError, type Command } from './command';
import { COMMANDS } from './commands';
import { commandHelp, tableHelp } from './help';

/** Where the CLI reads and writes; tests give their own. */
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

/** `cos --help` and its per-group and per-command variants, all from the command table. */
export const helpFor = ({ group, command }: { group?: string; command?: (typeof COMMANDS)[number] }): string =>
  command ? commandHelp(command) : tableHelp(COMMANDS, group);

/** Runs one CLI command; returns the exit code. Output: one JSON object with --json. */
export async function runCli(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const { out = process.stdout, err = process.stderr, env = process.env, input = process.stdin } = io;
  let line;
  try {
    line = readCommandLine(argv, COMMANDS, helpFor);
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    err.write(`${error.line()}\n`);
    return 2;
  }
  if (line.kind !== 'run') {
    (line.kind === 'help' ? out : err).write(`${line.text}\n`);
    return line.kind === 'help' ? 0 : 2;
  }
  const { command, flags, args } = line;
  loadDotCosEnv(env);
  let db;
  try {
    const config = loadCliConfig(env);
    db = createDb(config.DATABASE_URL, DB_ROLES.tool);
    const ctx: Parameters<Command['run']>[0] = { db, config, flags, args, readInput: () => readAll(input) };
    const result = await command.run(ctx);
    if (result.raw !== undefined) out.write(`${result.raw}\n`);
    else out.write(flags.json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    if (result.warning) err.write(`cos ${command.name}: warning: ${result.warning}\n`);
    return 0;
  } catch (error) {
    const known =
      error instanceof UsageError ||
      error instanceof KeyNotFoundError ||
      error instanceof PlanLimitError ||
      error instanceof ConfigError ||
      error instanceof AppError;
    const message = error instanceof Error ? error.message : String(error);
    // Every command makes its change in Postgres first, in one transaction: one refused here
    // did not make it (a revocation included), and running it again is the remedy.
    const unreachable = !known && isDependencyUnavailable(error);
    err.write(
      `cos ${command.name}: ${
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
