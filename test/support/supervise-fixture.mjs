// A small `npm start`: runs groups of `node -e` programs under the built Supervisor
// (dist/scripts/supervisor.js), stops them on SIGINT / SIGTERM (exit 0) or when one crash-loops
// (exit 1). Its processes and restart policy come as JSON in SUPERVISE_CONFIG
// (test/e2e/start-supervision.test.ts).
import { spawn } from 'node:child_process';
import process from 'node:process';
import supervisorModule from '../../dist/scripts/supervisor.js';

const { Supervisor } = supervisorModule;
const config = JSON.parse(process.env.SUPERVISE_CONFIG ?? '{}');
const log = (line) => process.stdout.write(`[cos] ${line}\n`);
let stopping = false;
const supervisor = new Supervisor({
  policy: config.policy,
  log,
  onGiveUp: ({ message }) => {
    process.stderr.write(`[cos] ${message}\n`);
    void stop(1);
  },
});
async function stop(code) {
  if (stopping) return;
  stopping = true;
  log('stopping…');
  await supervisor.stop();
  log('stopped');
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stop(0));

for (const group of config.groups ?? []) {
  // The program's name is its argument, so a test can tell the processes apart by command line.
  await supervisor.start(
    group.map(({ name, code }) => ({ name, start: () => spawn(process.execPath, ['-e', code, name], { stdio: 'inherit' }) })),
  );
}
if (!stopping) log('all started');
