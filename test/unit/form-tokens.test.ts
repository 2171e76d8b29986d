import type { FormTokenRef } from '../../dashboard/forms/form-token.repository';
import { FormTokens, repeatState } from '../../dashboard/services/form-tokens.service';
import { doneText, withRepeatNotice } from '../../dashboard/views/query-notices';

/** The repository's contract (claim once, complete, release, read the outcome) in memory; Redis's is tested in the dashboard's integration tests. */
class Tokens {
  readonly held = new Map<string, string>();
  async claim({ userId, digest }: FormTokenRef): Promise<boolean> {
    const key = `${userId}:${digest}`;
    if (this.held.has(key)) return false;
    this.held.set(key, 'pending');
    return true;
  }
  async complete({ userId, digest }: FormTokenRef, location: string): Promise<void> {
    this.held.set(`${userId}:${digest}`, `done:${location}`);
  }
  async release({ userId, digest }: FormTokenRef): Promise<void> {
    this.held.delete(`${userId}:${digest}`);
  }
  async outcome({ userId, digest }: FormTokenRef): Promise<string | null> {
    const value = this.held.get(`${userId}:${digest}`);
    return value?.startsWith('done:') ? value.slice('done:'.length) : null;
  }
}

const TOKEN = FormTokens.issue();
const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('FormTokens', () => {
  it('acts once; a repeat that arrives while the first runs waits for it and goes where it went', async () => {
    const tokens = new FormTokens(new Tokens(), { pollMs: 5, maxMs: 1000 });
    let acted = 0;
    const act = () => {
      acted += 1;
      return later(40, '/keys/test?done=created');
    };
    const [first, repeat] = await Promise.all([
      tokens.once('u1', TOKEN, 'POST /keys/test', '/keys/test', act),
      tokens.once('u1', TOKEN, 'POST /keys/test', '/keys/test', act),
    ]);
    expect(acted).toBe(1);
    expect(first).toBe('/keys/test?done=created');
    expect(repeat).toBe('/keys/test?done=created&again=acted');
    expect(repeatState({ done: 'created', again: 'acted' })).toBe('acted');
  });

  it("sends a repeat to the form's page, marked running, when the first outlasts its wait", async () => {
    const tokens = new FormTokens(new Tokens(), { pollMs: 5, maxMs: 30 });
    const first = tokens.once('u1', TOKEN, 'POST /keys/test', '/keys/test', () => later(200, '/keys/test'));
    const repeat = await tokens.once('u1', TOKEN, 'POST /keys/test', '/keys/test', () => Promise.resolve('/elsewhere'));
    expect(repeat).toBe('/keys/test?again=running');
    expect(repeatState({ again: 'running' })).toBe('running');
    expect(await first).toBe('/keys/test');
  });

  it('keeps tokens of other users, forms and renderings apart', async () => {
    const tokens = new FormTokens(new Tokens(), { pollMs: 5, maxMs: 0 });
    const act = () => Promise.resolve('/done');
    expect(await tokens.once('u1', TOKEN, 'POST /keys/test', '/f', act)).toBe('/done');
    expect(await tokens.once('u2', TOKEN, 'POST /keys/test', '/f', act)).toBe('/done');
    expect(await tokens.once('u1', TOKEN, 'POST /keys/live', '/f', act)).toBe('/done');
    expect(await tokens.once('u1', FormTokens.issue(), 'POST /keys/test', '/f', act)).toBe('/done');
    expect(await tokens.once('u1', TOKEN, 'POST /keys/test', '/f', act)).toBe('/done?again=acted');
  });

  it('frees the token of a refused submission, so the corrected form goes through', async () => {
    const tokens = new FormTokens(new Tokens(), { pollMs: 5, maxMs: 0 });
    await expect(tokens.once('u1', TOKEN, 'POST /keys/test', '/f', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await tokens.once('u1', TOKEN, 'POST /keys/test', '/f', () => Promise.resolve('/done'))).toBe('/done');
  });

  it.each([undefined, null, '', 'short', 'x'.repeat(65), 'has spaces in it, twenty-two', 42])(
    'refuses a missing or malformed token (%p) with 400',
    async (token) => {
      const tokens = new FormTokens(new Tokens(), { pollMs: 5, maxMs: 0 });
      await expect(tokens.once('u1', token, 'POST /keys/test', '/f', () => Promise.resolve('/done'))).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    },
  );

  it("waits a little less than a page's deadline", () => {
    expect(FormTokens.waitWithin(2000)).toEqual({ pollMs: 50, maxMs: 1750 });
    expect(FormTokens.waitWithin(100)).toEqual({ pollMs: 50, maxMs: 0 });
  });

  it('reads no repeat from a query without one, or with a value it does not know', () => {
    expect(repeatState({})).toBeUndefined();
    expect(repeatState({ again: '1' })).toBeUndefined();
    expect(repeatState({ again: ['acted', 'acted'] })).toBeUndefined();
  });
});

describe('withRepeatNotice', () => {
  it("says what a repeat did, after the first submission's own message", () => {
    expect(withRepeatNotice(undefined, { kind: 'success', text: 'Key created.' })).toEqual({ kind: 'success', text: 'Key created.' });
    expect(withRepeatNotice('acted')).toEqual({ kind: 'info', text: expect.stringContaining('acted on once') });
    expect(withRepeatNotice('running')).toEqual({ kind: 'info', text: expect.stringContaining('still being acted on') });
    const both = withRepeatNotice('acted', { kind: 'success', text: 'Key <b> created.' });
    expect(String(both?.text)).toBe('Key &lt;b&gt; created. This form was already sent: it was acted on once, and nothing was done again.');
  });

  it("says a running repeat acted once the page shows the first submission's result", () => {
    const reloaded = withRepeatNotice('running', { kind: 'success', text: 'Key created.' });
    expect(String(reloaded?.text)).toContain('acted on once');
    expect(String(reloaded?.text)).not.toContain('still being acted on');
  });
});

describe('doneText', () => {
  const messages = { revoked: 'Key revoked.' };
  it("names a page's own message, and nothing for any other value", () => {
    expect(doneText({ done: 'revoked' }, messages)).toBe('Key revoked.');
    for (const done of ['constructor', '__proto__', 'toString', 'hasOwnProperty', ['revoked'], undefined]) {
      expect(doneText({ done }, messages)).toBeUndefined();
    }
  });
});
