import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../../cli/commands';
import { runCliCaptured } from '../support/cli';

/**
 * The CLI's command line, read against its command table before anything connects: these runs
 * have no DATABASE_URL, so a command that got past the parser would fail on its config instead.
 */
const cli = (...argv: string[]) => runCliCaptured(argv, {});

/** A usage error: exit 2, nothing on stdout, one line on stderr. */
async function refused(argv: string[]): Promise<string> {
  const result = await cli(...argv);
  expect(result).toMatchObject({ code: 2, out: '' });
  expect(result.err.endsWith('\n')).toBe(true);
  expect(result.err.trim().split('\n')).toHaveLength(1);
  return result.err.trim();
}

describe('cos command line', () => {
  it('refuses an unknown flag, naming it and pointing to the help', async () => {
    expect(await refused(['keys', 'list', '--account', 'acme', '--colour'])).toBe(
      'cos keys list: unknown flag --colour; run cos keys list --help',
    );
  });

  it('refuses a misspelt flag instead of falling back to its default, and says which flag was meant', async () => {
    expect(await refused(['usage', '--account', 'acme', '--mnth', '2026-01'])).toBe(
      'cos usage: unknown flag --mnth (did you mean --month?); run cos usage --help',
    );
    expect(await refused(['keys', 'create', '--acount', 'acme', '--env', 'test'])).toMatch(
      /unknown flag --acount \(did you mean --account\?\)/,
    );
  });

  it('refuses a flag without its value, at the end or followed by another flag', async () => {
    expect(await refused(['usage', '--account', 'acme', '--month'])).toBe('cos usage: --month needs a value; run cos usage --help');
    expect(await refused(['usage', '--account', 'acme', '--month', '--json'])).toMatch(/^cos usage: --month needs a value/);
    expect(await refused(['keys', 'list', '--account'])).toMatch(/^cos keys list: --account needs a value/);
  });

  it('refuses a value given to a boolean flag, a missing or extra argument and a missing required flag', async () => {
    expect(await refused(['accounts', 'list', '--json=yes'])).toBe(
      'cos accounts list: --json takes no value; run cos accounts list --help',
    );
    expect(await refused(['keys', 'revoke'])).toMatch(/^cos keys revoke: missing ID, the key id/);
    expect(await refused(['keys', 'revoke', 'key_a', 'key_b'])).toMatch(/^cos keys revoke: unexpected argument "key_b"/);
    expect(await refused(['keys', 'list'])).toBe('cos keys list: --account is required; run cos keys list --help');
  });

  it('refuses an unknown command, and a group without its command', async () => {
    expect(await refused(['frobnicate'])).toBe('cos: unknown command "frobnicate"; run cos --help for the list');
    expect(await refused(['keys', 'frobnicate', '--json'])).toBe('cos: unknown command "keys frobnicate"; run cos --help for the list');
    expect(await refused(['keys'])).toBe('cos keys: a command must follow: create, list, revoke, delete, rotate; run cos keys --help');
    expect(await refused(['--verbose', 'keys', 'list'])).toMatch(/^cos: unknown flag --verbose before the command/);
  });

  it('prints the help on stdout for --help, and on stderr with exit 2 when no command is given', async () => {
    const help = await cli('--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    for (const command of COMMANDS) expect(help.out).toContain(`\n${command.name}`);
    expect(await cli()).toMatchObject({ code: 2, out: '', err: help.out });
    const group = await cli('keys', '--help');
    expect(group.code).toBe(0);
    expect(group.out).toContain('keys rotate ID [--grace DURATION]');
    expect(group.out).not.toContain('accounts create');
  });

  it("prints a command's arguments and every flag with its default, wherever --help stands", async () => {
    const help = await cli('keys', 'rotate', 'key_x', '--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toMatch(/^usage: cos keys rotate ID \[--grace DURATION\] \[--json\]\n/);
    expect(help.out).toMatch(/--grace DURATION +how long the old key keeps working, like 30m, 24h or 7d \(default 24h\)/);
    expect(help.out).toMatch(/--json +print one JSON object on stdout/);
    // Even a line with a mistake in it gets the help it asked for.
    expect((await cli('usage', '--mnth', '--help')).code).toBe(0);
  });

  it('has one entry per command, and every flag described with how its value is written', () => {
    const names = COMMANDS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const command of COMMANDS) {
      expect(command.summary).not.toBe('');
      for (const declared of [...Object.values(command.flags), ...command.positionals]) expect(declared.description).not.toBe('');
      for (const flag of Object.values(command.flags)) if (flag.type === 'string') expect(flag.value).toMatch(/\S/);
    }
  });

  it('is what docs/OPERATIONS.md shows as the output of cos --help', async () => {
    const docs = readFileSync(path.join(__dirname, '../../docs/OPERATIONS.md'), 'utf8');
    const shown = /<!-- the output of `cos --help` -->\n```\n([\s\S]*?)```\n/.exec(docs)?.[1];
    expect(shown).toBeDefined();
    // On a difference: paste the output of `npm run cli -- --help` into that block.
    expect(shown).toBe((await cli('--help')).out);
  });
});
