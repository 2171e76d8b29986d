import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

/** What a benchmark or soak ran on: the code and the machine. */

/** The commit measured (BENCH_SOURCE names it when the code is not a git checkout, e.g. a `git archive` copy). */
export function runSource(): { commit: string; uncommittedFiles: number } {
  if (process.env.BENCH_SOURCE) return { commit: process.env.BENCH_SOURCE, uncommittedFiles: 0 };
  const git = (...args: string[]) =>
    spawnSync('git', args, { cwd: path.join(__dirname, '../../..'), encoding: 'utf8' }).stdout?.trim() ?? '';
  return { commit: git('rev-parse', '--short', 'HEAD'), uncommittedFiles: git('status', '--porcelain').split('\n').filter(Boolean).length };
}

export function machineDescription() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  };
}
