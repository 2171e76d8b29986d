import { Readable, Writable } from 'node:stream';
import { runCli } from '../../cli/main';

/** A stream that keeps everything written to it (a log destination, the CLI's output). */
export function capture(): { stream: Writable; text: () => string } {
  let text = '';
  return { stream: new Writable({ write: (chunk, _encoding, done) => ((text += chunk.toString()), done()) }), text: () => text };
}

/**
 * Runs the operator CLI in process against `env` (with `stdin` as its standard input); returns
 * its exit code and what it wrote to stdout and stderr.
 */
export async function runCliCaptured(
  argv: string[],
  env: NodeJS.ProcessEnv,
  stdin = '',
): Promise<{ code: number; out: string; err: string }> {
  const out = capture();
  const err = capture();
  const code = await runCli(argv, { out: out.stream, err: err.stream, env, input: Readable.from([stdin]) });
  return { code, out: out.text(), err: err.text() };
}
