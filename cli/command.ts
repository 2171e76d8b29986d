import type { CliConfig } from '../shared/config/config';
import type { Db } from '../shared/db/database';

/** A flag of a command: `--name value`, or a boolean `--name`. */
export type Flag =
  | {
      type: 'string';
      /** How the help writes its value: `--month YYYY-MM`. */
      value: string;
      description: string;
      required?: boolean;
      /** Taken when the flag is absent; the help shows it. */
      default?: string;
    }
  | { type: 'boolean'; description: string };

/** An argument given by position, after the command's name (`keys revoke ID`); every one is required. */
export interface Argument {
  name: string;
  /** How the help writes it: `ID`. */
  value: string;
  description: string;
}

/** The flags every command takes besides its own. */
export const COMMON_FLAGS = {
  json: { type: 'boolean', description: 'print one JSON object on stdout' },
  help: { type: 'boolean', description: "print the command's flags and exit" },
} as const satisfies Record<string, Flag>;

type CommonFlags = typeof COMMON_FLAGS;

/** What a handler receives for its flags: a string when required or defaulted, else maybe undefined. */
export type FlagValues<F extends Record<string, Flag>> = {
  [K in keyof F]: F[K] extends { type: 'boolean' }
    ? boolean
    : F[K] extends { required: true } | { default: string }
      ? string
      : string | undefined;
};

export interface CommandContext<F extends Record<string, Flag>, P extends readonly Argument[]> {
  db: Db;
  config: CliConfig;
  flags: FlagValues<F & CommonFlags>;
  /** The positional arguments by name. */
  args: { [K in P[number]['name']]: string };
  /** Everything on standard input (read only by commands that ask for it, like --password-stdin). */
  readInput: () => Promise<string>;
}

/** A command returns the JSON object it prints (and a text rendering for humans). */
export interface CommandOutput {
  json: unknown;
  text: string;
  /** Printed as is, even with --json (e.g. `usage --format csv`). */
  raw?: string;
  /** Printed on stderr: the command did its work, with a caveat. */
  warning?: string;
}

export interface Command<F extends Record<string, Flag> = Record<string, Flag>, P extends readonly Argument[] = readonly Argument[]> {
  /** One or two words: `usage`, `keys create`. */
  name: string;
  /** One line for `cos --help`. */
  summary: string;
  positionals: P;
  flags: F;
  run: (ctx: CommandContext<F, P>) => Promise<CommandOutput>;
}

/** A command as the table holds it: its flag and argument types checked here, erased in the table. */
export function command<const F extends Record<string, Flag>, const P extends readonly Argument[] = []>(
  declared: Omit<Command<F, P>, 'positionals'> & { positionals?: P },
): Command {
  const positionals: readonly Argument[] = declared.positionals ?? [];
  // The command line is parsed against these very flags and arguments (command-line.ts), so the
  // values the table's run receives are the ones this command declared.
  const run = (ctx: CommandContext<Record<string, Flag>, readonly Argument[]>) => declared.run(ctx as CommandContext<F, P>);
  return { name: declared.name, summary: declared.summary, positionals, flags: declared.flags, run };
}

/** Wrong usage (a flag, an argument, a value): exit code 2. */
export class UsageError extends Error {}
