import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { formatTime } from '../../dashboard/views/format';

/** The chart script's formatters, from the file the browser loads, run without a page. */
function chartFormatters() {
  const window: Record<string, any> = {};
  const source = readFileSync(path.join(__dirname, '../../dashboard/assets/charts.js'), 'utf8');
  vm.runInNewContext(source, { window, document: { getElementById: () => null } });
  return window.dashboardCharts as {
    pointLabel: (seconds: number | null) => string;
    axisLabels: (splits: number[], spanSeconds: number) => string[];
    countLabels: (splits: number[]) => string[];
    hasLoneValue: (values: Array<number | null>) => boolean;
  };
}

const at = (iso: string) => Date.parse(iso) / 1000;

describe('dashboard times: UTC, 24-hour', () => {
  it('formats page times to the minute in UTC, whatever the offset they were written with', () => {
    expect(formatTime('2026-11-29T21:07:45.123Z')).toBe('2026-11-29 21:07 UTC');
    expect(formatTime('2026-01-02T00:00:00.000Z')).toBe('2026-01-02 00:00 UTC');
    expect(formatTime(null)).toBe('—');
  });

  it('labels a chart point with its UTC date and 24-hour time', () => {
    const { pointLabel } = chartFormatters();
    expect(pointLabel(at('2026-11-29T21:07:00Z'))).toBe('2026-11-29 21:07 UTC');
    expect(pointLabel(at('2026-11-29T09:05:00Z'))).toBe('2026-11-29 09:05 UTC');
    expect(pointLabel(null)).toBe('—');
  });

  it('labels the time axis in 24-hour UTC: hours within a day, the date at midnight and over days', () => {
    const { axisLabels } = chartFormatters();
    const hours = [at('2026-11-29T13:00:00Z'), at('2026-11-29T23:30:00Z'), at('2026-11-30T00:00:00Z')];
    expect(axisLabels(hours, 86_400)).toEqual(['13:00', '23:30', '11-30 00:00']);
    expect(axisLabels([at('2026-11-01T00:00:00Z'), at('2026-11-08T00:00:00Z')], 30 * 86_400)).toEqual(['11-01', '11-08']);
    expect(axisLabels(hours, 86_400).join()).not.toMatch(/am|pm/i);
  });

  it('labels count ticks only at whole numbers', () => {
    const { countLabels } = chartFormatters();
    expect(countLabels([0, 0.5, 1, 1.5, 2, 1500])).toEqual(['0', '', '1', '', '2', '1,500']);
  });

  it('draws the points of a series whose values stand between gaps (no line reaches them)', () => {
    const { hasLoneValue } = chartFormatters();
    expect(hasLoneValue([null, 12, null, null, 30, null])).toBe(true);
    expect(hasLoneValue([7])).toBe(true);
    expect(hasLoneValue([null, 12, 14, null, 30, 31])).toBe(false);
    expect(hasLoneValue([null, null])).toBe(false);
  });
});
