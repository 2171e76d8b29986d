import { COMMON_FLAGS, type Command, type Flag } from './command';

/** `keys create --account N --env test|live [--name LABEL] …`: how a command is written. */
export function synopsis(command: Command): string {
  const flags = Object.entries(command.flags).map(([name, flag]) => {
    const written = flag.type === 'string' ? `--${name} ${flag.value}` : `--${name}`;
    return flag.type === 'string' && flag.required ? written : `[${written}]`;
  });
  return [command.name, ...command.positionals.map((p) => p.value), ...flags].join(' ');
}

const FOOTER = [
  'Every command also takes --json (print one JSON object on stdout) and --help (print its flags).',
  'Exit code 0 when done, 2 for a usage error (unknown command, flag or value), 1 for any other failure.',
];

/** `cos --help`: every command of the table (or of one group, `cos keys --help`), with its summary. */
export function tableHelp(commands: readonly Command[], group?: string): string {
  const shown = group === undefined ? commands : commands.filter((c) => c.name.startsWith(`${group} `));
  return [
    `usage: cos ${group ?? '<command>'} ${group === undefined ? '' : '<command> '}[arguments] [--json]`,
    '',
    ...shown.flatMap((c) => [synopsis(c), `    ${c.summary}`]),
    '',
    ...FOOTER,
  ].join('\n');
}

/** `cos <command> --help`: the command's summary, arguments and every flag with its default. */
export function commandHelp(command: Command): string {
  const rows: Array<[string, string]> = [
    ...command.positionals.map((p): [string, string] => [p.value, p.description]),
    ...Object.entries({ ...command.flags, ...COMMON_FLAGS }).map(([name, flag]): [string, string] => [
      flagLabel(name, flag),
      flagText(flag),
    ]),
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `usage: cos ${synopsis(command)} [--json]`,
    '',
    command.summary,
    '',
    ...rows.map(([label, text]) => `  ${label.padEnd(width)}  ${text}`),
  ].join('\n');
}

const flagLabel = (name: string, flag: Flag) => (flag.type === 'string' ? `--${name} ${flag.value}` : `--${name}`);

function flagText(flag: Flag): string {
  if (flag.type === 'boolean') return flag.description;
  const notes = [flag.required ? 'required' : '', flag.default !== undefined ? `default ${flag.default}` : ''].filter(Boolean);
  return notes.length > 0 ? `${flag.description} (${notes.join(', ')})` : flag.description;
}
