import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NODE_FLAGS, nodeArgs, type ServiceProcess } from '../../shared/process/node-flags';

const root = path.join(__dirname, '../..');
const roles = Object.keys(NODE_FLAGS) as ServiceProcess[];

describe.each(roles)('the %s process flags', (role) => {
  const command = ['node', ...nodeArgs(role, `dist/${role}/main.js`)];

  it(`\`npm run start:${role}\` starts it with them`, () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts[`start:${role}`]).toBe(command.join(' '));
  });

  it("the compose file's service starts it with them", () => {
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(compose).toContain(`command: ${JSON.stringify(command).replaceAll(',', ', ')}`);
  });

  it('are flags node accepts (a typo would stop the process at start)', () => {
    expect(NODE_FLAGS[role].length).toBeGreaterThan(0);
    const run = spawnSync(process.execPath, [...NODE_FLAGS[role], '-e', '0'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
