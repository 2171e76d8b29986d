import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../scripts/chromium';
import { startHarness, type Harness } from '../support/harness';

/**
 * GET /docs in Debian's chromium, from the API's own server: on a phone nothing makes the page
 * scroll sideways (long code scrolls in its own box, a table's rows become cards of labelled
 * lines), on a desktop the tables stay tables, and an error's docUrl lands on its row.
 */
let h: Harness;
let url: string;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness();
  [url, browser] = await Promise.all([h.listen(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** /docs at `viewport`; `examples` opens them all, as their JSON is the widest text on the page. */
async function docs(viewport: { width: number; height: number }, { examples = true, hash = '' } = {}): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const res = await page.goto(`${url}/docs${hash}`);
  expect(res?.status()).toBe(200);
  if (examples) await page.locator('details').evaluateAll((all) => all.forEach((details) => details.setAttribute('open', '')));
  return page;
}

/**
 * Elements reaching past the viewport's right edge that no box of their own holds: a box that
 * scrolls (or clips, as the visually hidden table headings) within the viewport holds them.
 */
const sticksOut = (page: Page): Promise<string[]> =>
  page.locator('html').evaluate((html) => {
    const width: number = html.clientWidth;
    const { body } = html.ownerDocument;
    const style = (element: unknown) => html.ownerDocument.defaultView.getComputedStyle(element);
    const holds = (box: { getBoundingClientRect(): { right: number } }) =>
      ['auto', 'scroll', 'hidden', 'clip'].includes(style(box).overflowX) && box.getBoundingClientRect().right <= width + 1;
    return [...body.querySelectorAll('*')].flatMap((element) => {
      const { right, width: own } = element.getBoundingClientRect();
      if (own === 0 || right <= width + 1) return [];
      for (let box = element.parentElement; box && box !== body; box = box.parentElement) if (holds(box)) return [];
      return [`<${element.tagName.toLowerCase()}> ${Math.round(right)} px: ${(element.textContent ?? '').slice(0, 60)}`];
    });
  });

const pageWidth = (page: Page): Promise<number> => page.locator('html').evaluate((html) => html.scrollWidth);

/** An element's computed style property, of the element or of its `::before`. */
const styleOf = (page: Page, selector: string, property: string, pseudo?: string): Promise<string> =>
  page
    .locator(selector)
    .first()
    .evaluate((element, [name, part]) => element.ownerDocument.defaultView.getComputedStyle(element, part).getPropertyValue(name), [
      property,
      pseudo,
    ] as const);

describe('GET /docs in a browser', () => {
  it('fits a phone (390 × 844): no sideways scrolling; code scrolls in its box, tables become cards', async () => {
    const page = await docs(PHONE);
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
    expect(await sticksOut(page)).toEqual([]);
    // JSON and metrics lines wider than the phone scroll inside their own box.
    const wide = await page
      .locator('pre')
      .evaluateAll((pres) =>
        pres.filter((pre) => pre.scrollWidth > pre.clientWidth).map((pre) => pre.ownerDocument.defaultView.getComputedStyle(pre).overflowX),
      );
    expect(wide.length).toBeGreaterThan(0);
    expect([...new Set(wide)]).toEqual(['auto']);
    // Each row of a table is a card whose lines name their column, none wider than the phone.
    const cell = 'td[data-label="Description"]';
    expect(await styleOf(page, cell, 'display')).toBe('block');
    expect(await styleOf(page, cell, 'content', '::before')).toBe('"Description: "');
    // Readable: body text at 16 px, code at 13 px or more.
    expect(await styleOf(page, 'body', 'font-size')).toBe('16px');
    const code = await page
      .locator('pre, td code')
      .evaluateAll((all) => all.map((el) => parseFloat(el.ownerDocument.defaultView.getComputedStyle(el).fontSize)));
    expect(Math.min(...code)).toBeGreaterThanOrEqual(13);
    await page.close();
  });

  it('reads as a reference on a desktop (1280 × 800): tables as tables, nothing sideways', async () => {
    const page = await docs(DESKTOP);
    expect(await pageWidth(page)).toBeLessThanOrEqual(DESKTOP.width);
    expect(await sticksOut(page)).toEqual([]);
    expect(await styleOf(page, 'td[data-label="Description"]', 'display')).toBe('table-cell');
    expect(await styleOf(page, 'td[data-label="Description"]', 'content', '::before')).toBe('none');
    expect(await page.locator('thead').first().isVisible()).toBe(true);
    await page.close();
  });

  it("lands on an error code's row from its docUrl, on a phone", async () => {
    const refused = await h
      .http()
      .post('/v1/outcome')
      .set('Authorization', `Bearer ${await h.key('docs-browser')}`)
      .send({});
    const { docUrl } = (refused.body as { error: { docUrl: string } }).error;
    expect(docUrl).toBe('/docs#error-invalid_request_id');
    const page = await docs(PHONE, { examples: false, hash: docUrl.slice('/docs'.length) });
    const row = page.locator('#error-invalid_request_id');
    await expect(row.textContent()).resolves.toBe('INVALID_REQUEST_ID');
    const top = await row.evaluate((el) => el.getBoundingClientRect().top);
    expect(top).toBeGreaterThan(-1); // scrolled to, give or take sub-pixel rounding
    expect(top).toBeLessThan(PHONE.height);
    await page.close();
  });
});
