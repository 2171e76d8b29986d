import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_NODE_FLAGS, apiNodeArgs } from '../../api/node-flags';

describe('the API process flags', () => {
  it('`npm run start:api` starts the API with them', () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['start:api']).toBe(['node', ...apiNodeArgs('dist/api/main.js')].join(' '));
  });

  it('are flags node accepts (a typo would stop the API at start)', () => {
    expect(API_NODE_FLAGS.length).toBeGreaterThan(0);
    const run = spawnSync(process.execPath, [...API_NODE_FLAGS, '-e', '0'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
