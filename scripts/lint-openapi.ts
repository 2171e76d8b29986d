import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiReference } from '../api/openapi/reference';

/**
 * `npm run lint:openapi`: lints the OpenAPI document exactly as GET /v1/openapi.json serves it
 * with Redocly's recommended rules (redocly.yaml) and fails on any error or warning — Redocly
 * itself exits 0 on warnings. Offline: telemetry and the update check are turned off.
 */
const ROOT = path.join(__dirname, '../..');
const CLI = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location?: Array<{ pointer?: string }>;
}

function main(): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'cos-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, apiReference().json);
    const run = spawnSync(process.execPath, [CLI, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    let report: { totals: { errors: number; warnings: number }; problems: Problem[] };
    try {
      report = JSON.parse(run.stdout) as typeof report;
    } catch {
      process.stderr.write(`redocly lint did not report (exit ${run.status}):\n${run.stdout}${run.stderr}`);
      return 1;
    }
    for (const problem of report.problems) {
      const where = problem.location?.[0]?.pointer ?? '';
      process.stderr.write(`${problem.severity} ${problem.ruleId} ${where}: ${problem.message}\n`);
    }
    const { errors, warnings } = report.totals;
    if (errors + warnings > 0) {
      process.stderr.write(`openapi.json: ${errors} errors, ${warnings} warnings (redocly lint, recommended rules)\n`);
      return 1;
    }
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main();
