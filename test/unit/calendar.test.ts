import { secondsInMonth, startOfMonth, startOfNextMonth, utcDay, utcMonth } from '../../shared/util/calendar';

describe('UTC calendar', () => {
  it('names the day and month of a moment, across day, month and year ends in either order', () => {
    const moments = [
      '2026-11-30T23:59:59.999Z',
      '2026-12-01T00:00:00.000Z',
      '2026-11-30T12:00:00.000Z',
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '2026-12-31T00:00:00.000Z',
      '2028-02-29T13:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
    ];
    for (const iso of moments) {
      const ms = Date.parse(iso);
      expect(utcDay(ms)).toBe(iso.slice(0, 10));
      expect(utcMonth(ms)).toBe(iso.slice(0, 7));
      const [year, month] = iso.split('-').map(Number) as [number, number];
      expect(startOfMonth(ms)).toBe(Date.UTC(year, month - 1, 1));
      expect(startOfNextMonth(ms)).toBe(Date.UTC(year, month, 1));
    }
  });

  it('counts the seconds of each month, leap February included', () => {
    expect(secondsInMonth(Date.parse('2028-02-10T00:00:00Z'))).toBe(29 * 86_400);
    expect(secondsInMonth(Date.parse('2027-02-10T00:00:00Z'))).toBe(28 * 86_400);
    expect(secondsInMonth(Date.parse('2026-11-27T05:00:00Z'))).toBe(30 * 86_400);
    expect(secondsInMonth(Date.parse('2026-12-27T05:00:00Z'))).toBe(31 * 86_400);
  });

  it('refuses an invalid time as Date does', () => {
    expect(() => utcDay(Number.NaN)).toThrow(RangeError);
  });
});
