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
    for (const flag of API_NODE_FLAGS) expect(process.allowedNodeEnvironmentFlags.has(flag.split('=')[0]!)).toBe(true);
  });
});
