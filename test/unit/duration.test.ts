import { durationMs, parseDuration } from '../../shared/config/duration';

describe('parseDuration', () => {
  it.each([
    ['5s', 5_000],
    ['30s', 30_000],
    ['5m', 300_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
    ['1.5h', 5_400_000],
    ['200ms', 200],
  ])('parses %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['5', 'h', '-1s', '0s', '0d', '5w', '', 's5', '5 s', '1e3s', '5sec', '.5h', '0ms', '0.4ms', 'ms'])('rejects %p', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

describe('durationMs schema', () => {
  it('turns a duration string into milliseconds', () => {
    expect(durationMs.parse('24h')).toBe(86_400_000);
    expect(durationMs.parse('2m')).toBe(120_000);
  });

  it('fails with a message naming the bad value and the expected form', () => {
    const result = durationMs.safeParse('5w');
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.message).toContain('"5w"');
    expect(result.error!.issues[0]!.message).toMatch(/24h/);
  });

  it('rejects non-strings', () => {
    expect(durationMs.safeParse(5000).success).toBe(false);
  });
});
