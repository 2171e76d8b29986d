import { parseArgs, type ParseArgsConfig } from 'node:util';
import { COMMON_FLAGS, UsageError, type Command, type Flag } from './command';

/**
 * What the command line asks for: the help it asked for (stdout, exit 0), the help because it
 * named no command (stderr, exit 2), or a command to run with its values.
 */
export type CommandLine =
  { kind: 'help' | 'no-command'; text: string } | { kind: 'run'; command: Command; flags: RunContext['flags']; args: RunContext['args'] };

type RunContext = Parameters<Command['run']>[0];

/**
 * A command line that names no command or misuses one, said in one line: `command` is the
 * command (or group) it concerns, whose help the message points to.
 */
export class CommandLineError extends UsageError {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }

  /** `cos usage: unknown flag --mnth (did you mean --month?); run cos usage --help`. */
  line(): string {
    return this.command === undefined
      ? `cos: ${this.message}; run cos --help for the list`
      : `cos ${this.command}: ${this.message}; run cos ${this.command} --help`;
  }
}

const HELP_TOKENS = new Set(['--help', '-h']);

/** The tokens before `--` (after it everything is an argument). */
const flagTokens = (tokens: string[]) => (tokens.includes('--') ? tokens.slice(0, tokens.indexOf('--')) : tokens);

/**
 * Reads argv against the command table: the command's one or two words, then its arguments and
 * flags, parsed strictly so that a misspelt or unknown flag, a missing value or a stray argument
 * is refused rather than ignored. `--json` and `--help` may also come before the command.
 * `helpFor` renders the help of the whole table, of a group (`keys`) or of one command.
 */
export function readCommandLine(
  argv: string[],
  commands: readonly Command[],
  helpFor: (subject: { group?: string; command?: Command }) => string,
): CommandLine {
  let start = 0;
  while (start < argv.length && argv[start]!.startsWith('-')) {
    if (!Object.hasOwn(COMMON_FLAGS, argv[start]!.slice(2)) && argv[start] !== '-h') {
      throw new CommandLineError(`unknown flag ${argv[start]} before the command`);
    }
    start++;
  }
  const leading = argv.slice(0, start);
  const [first, second] = argv.slice(start);
  if (first === undefined) {
    return { kind: leading.some((token) => HELP_TOKENS.has(token)) ? 'help' : 'no-command', text: helpFor({}) };
  }
  const named = (name: string) => commands.find((c) => c.name === name);
  const pair = second === undefined ? undefined : named(`${first} ${second}`);
  const found = pair ?? named(first);
  if (!found) {
    const group = commands.some((c) => c.name.startsWith(`${first} `));
    const asksHelp = argv.some((token) => HELP_TOKENS.has(token));
    if (group && (second === undefined || second.startsWith('-'))) {
      if (asksHelp) return { kind: 'help', text: helpFor({ group: first }) };
      const names = commands.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name.slice(first.length + 1));
      throw new CommandLineError(`a command must follow: ${names.join(', ')}`, first);
    }
    const words = [first, second].filter((word) => word !== undefined && !word.startsWith('-'));
    throw new CommandLineError(`unknown command "${words.join(' ')}"`);
  }
  const tokens = [...leading, ...argv.slice(start + (pair ? 2 : 1))];
  if (flagTokens(tokens).some((token) => HELP_TOKENS.has(token))) return { kind: 'help', text: helpFor({ command: found }) };
  return { kind: 'run', command: found, ...readArguments(found, tokens) };
}

function readArguments(command: Command, tokens: string[]): Pick<RunContext, 'flags' | 'args'> {
  const declared: Record<string, Flag> = { ...command.flags, ...COMMON_FLAGS };
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, flag] of Object.entries(declared)) {
    options[name] = flag.type === 'string' && flag.default !== undefined ? { type: 'string', default: flag.default } : { type: flag.type };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: tokens, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new CommandLineError(parseFailure(error, Object.keys(declared)), command.name);
  }
  const { values, positionals } = parsed;
  const missing = command.positionals[positionals.length];
  if (missing) throw new CommandLineError(`missing ${missing.value}, ${missing.description}`, command.name);
  const extra = positionals[command.positionals.length];
  if (extra !== undefined) throw new CommandLineError(`unexpected argument "${extra}"`, command.name);
  for (const [name, flag] of Object.entries(command.flags)) {
    if (flag.type === 'string' && flag.required && values[name] === undefined) {
      throw new CommandLineError(`--${name} is required`, command.name);
    }
  }
  const args = Object.fromEntries(command.positionals.map((argument, i) => [argument.name, positionals[i]!]));
  // Typed as the command declared them: parseArgs was given exactly those flags.
  return { flags: values as RunContext['flags'], args };
}

/** util.parseArgs' refusal, as one line naming the flag (its own messages span several). */
function parseFailure(error: unknown, flags: string[]): string {
  const { code, message } = error as { code?: string; message?: string };
  const flag = /'(-[^' ]*)/.exec(message ?? '')?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const guess = closest(flag.replace(/^-+/, ''), flags);
      return `unknown flag ${flag}${guess ? ` (did you mean --${guess}?)` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(message ?? '')) return `${flag} takes no value`;
      // Followed by something that looks like a flag: most likely a forgotten value.
      if (/ambiguous/.test(message ?? '')) return `${flag} needs a value (write ${flag}=-… for one starting with "-")`;
      return `${flag} needs a value`;
    default:
      return (message ?? String(error)).split('\n')[0]!;
  }
}

/** The flag a misspelling most likely meant: at most two edits away, or what it begins. */
function closest(typed: string, flags: string[]): string | undefined {
  if (typed === '') return undefined;
  let best: { flag: string; distance: number } | undefined;
  for (const flag of flags) {
    const distance = flag.startsWith(typed) && typed.length >= 3 ? 1 : editDistance(typed, flag);
    if (distance <= 2 && (!best || distance < best.distance)) best = { flag, distance };
  }
  return best?.flag;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
