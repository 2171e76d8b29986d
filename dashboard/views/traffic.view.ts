import type { QuotaForecast } from '../../shared/traffic/quota-forecast';
import type { TrafficPoint, TrafficSeries } from '../../shared/traffic/traffic-queries';
import type { RotationTraffic } from '../services/traffic.service';
import { chartDataBlock, chartFigure, chartX, isEmptyChart, trafficCharts, type ChartSpec } from './charts';
import { formatTime } from './format';
import { html, type Html } from './html';
import { page, type Viewer } from './layout';
import { trafficCsvHref } from './traffic-csv';
import { keyLabel, trafficPicker, WINDOW_LABELS, type PickerState } from './traffic-picker';
import { usageSection } from './usage.view';

export interface TrafficPageInput {
  viewer: Viewer;
  picker: PickerState;
  series: TrafficSeries;
  rotation: RotationTraffic | null;
  /** Live keys' month-to-date usage (all of them, or the chosen key's); null on test pages. */
  usage: QuotaForecast[] | null;
}

const STEP_NAMES = { '1h': 'minute', '24h': 'hour', '30d': 'day' } as const;
const total = (points: TrafficPoint[], pick: (p: TrafficPoint) => number) => points.reduce((sum, p) => sum + pick(p), 0);
const fmt = (n: number) => n.toLocaleString('en-US');
const ms = (n: number | null) => (n === null ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(0));

function stepLabel(series: TrafficSeries, at: string): string {
  return series.window === '30d' ? at.slice(0, 10) : formatTime(at).replace(' UTC', '');
}

function summary(points: TrafficPoint[]): Html {
  const stats: [string, string, number][] = [
    ['requests', 'Requests', total(points, (p) => p.requests)],
    ['2xx', 'Succeeded (2xx)', total(points, (p) => p.byClass['2xx'])],
    ['4xx', 'Client errors (4xx)', total(points, (p) => p.byClass['4xx'])],
    ['5xx', 'Server errors (5xx)', total(points, (p) => p.byClass['5xx'])],
    ['401', 'Unauthorized (401)', total(points, (p) => p.unauthorized)],
    ['403', 'Forbidden (403)', total(points, (p) => p.forbidden)],
    ['429', 'Rate limited (429)', total(points, (p) => p.rateLimited)],
  ];
  return html`<dl class="stats">
    ${stats.map(
      ([id, label, value]) =>
        html`<div data-stat="${id}">
          <dt>${label}</dt>
          <dd>${fmt(value)}</dd>
        </div>`,
    )}
  </dl>`;
}

function endpointTable(points: TrafficPoint[]): Html {
  const totals = new Map<string, Record<string, number>>();
  for (const p of points) {
    for (const [endpoint, classes] of Object.entries(p.byEndpoint)) {
      const row = totals.get(endpoint) ?? { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
      for (const [c, n] of Object.entries(classes)) row[c] = (row[c] ?? 0) + n;
      totals.set(endpoint, row);
    }
  }
  if (totals.size === 0) return html`<p>No requests in this period.</p>`;
  return html`<table class="data">
    <caption>
      Requests by endpoint and status class
    </caption>
    <thead>
      <tr>
        <th scope="col">Endpoint</th>
        <th scope="col">2xx</th>
        <th scope="col">3xx</th>
        <th scope="col">4xx</th>
        <th scope="col">5xx</th>
      </tr>
    </thead>
    <tbody>
      ${[...totals]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([endpoint, c]) =>
            html`<tr>
              <th scope="row" data-label="Endpoint">${endpoint}</th>
              <td data-label="2xx">${fmt(c['2xx']!)}</td>
              <td data-label="3xx">${fmt(c['3xx']!)}</td>
              <td data-label="4xx">${fmt(c['4xx']!)}</td>
              <td data-label="5xx">${fmt(c['5xx']!)}</td>
            </tr>`,
        )}
    </tbody>
  </table>`;
}

function stepTable(series: TrafficSeries): Html {
  const step = STEP_NAMES[series.window];
  return html`<details class="steps">
    <summary>Every ${step} as a table</summary>
    <table class="data">
      <caption>
        Requests, refusals and latency per ${step} (UTC)
      </caption>
      <thead>
        <tr>
          <th scope="col">From</th>
          <th scope="col">Requests</th>
          <th scope="col">2xx</th>
          <th scope="col">4xx</th>
          <th scope="col">5xx</th>
          <th scope="col">401</th>
          <th scope="col">403</th>
          <th scope="col">429</th>
          <th scope="col">p50 ms</th>
          <th scope="col">p95 ms</th>
        </tr>
      </thead>
      <tbody>
        ${[...series.points].reverse().map(
          (p) =>
            html`<tr>
              <th scope="row" data-label="From">${stepLabel(series, p.at)}</th>
              <td data-label="Requests">${fmt(p.requests)}</td>
              <td data-label="2xx">${fmt(p.byClass['2xx'])}</td>
              <td data-label="4xx">${fmt(p.byClass['4xx'])}</td>
              <td data-label="5xx">${fmt(p.byClass['5xx'])}</td>
              <td data-label="401">${fmt(p.unauthorized)}</td>
              <td data-label="403">${fmt(p.forbidden)}</td>
              <td data-label="429">${fmt(p.rateLimited)}</td>
              <td data-label="p50 ms">${ms(p.p50Ms)}</td>
              <td data-label="p95 ms">${ms(p.p95Ms)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </details>`;
}

function rotationSection(r: RotationTraffic): { body: Html; chart: ChartSpec } {
  const oldTotal = total(r.oldSeries.points, (p) => p.requests);
  const nextTotal = total(r.nextSeries.points, (p) => p.requests);
  const chart: ChartSpec = {
    id: 'rotation',
    unit: 'requests',
    series: [
      { label: `old ${keyLabel(r.old)}`, values: r.oldSeries.points.map((p) => p.requests), color: '#6e7781' },
      { label: `new ${keyLabel(r.next)}`, values: r.nextSeries.points.map((p) => p.requests), color: '#1a7f37' },
    ],
  };
  const body = html`<section class="card" aria-labelledby="rotation-title" data-section="rotation">
    <h2 id="rotation-title">Rotation in progress</h2>
    <p>
      “${keyLabel(r.old)}” was replaced by “${keyLabel(r.next)}” and keeps working until ${formatTime(r.old.expiresAt)}. Traffic still on
      the old key comes from deployments that have not switched yet.
    </p>
    ${chartFigure('rotation', 'Requests of the old and the new key (UTC)', isEmptyChart(chart))}
    <table class="data">
      <caption>
        Requests of the old and the new key in this period
      </caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Requests</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <th scope="row" data-label="Key">old: ${keyLabel(r.old)}</th>
          <td data-label="Requests">${fmt(oldTotal)}</td>
        </tr>
        <tr>
          <th scope="row" data-label="Key">new: ${keyLabel(r.next)}</th>
          <td data-label="Requests">${fmt(nextTotal)}</td>
        </tr>
      </tbody>
    </table>
  </section>`;
  return { body, chart };
}

export function trafficPage(input: TrafficPageInput): string {
  const { series, picker } = input;
  const step = STEP_NAMES[series.window];
  const who = picker.key ? `key “${keyLabel(picker.key)}”` : `all ${picker.environment} keys`;
  const charts = trafficCharts(series);
  const rotation = input.rotation ? rotationSection(input.rotation) : null;
  if (rotation) charts.push(rotation.chart);
  // Without a single request every chart would be bare axes; with some, a chart of zero refusals still says something.
  const quiet = series.points.every((p) => p.requests === 0);
  const empty = (id: string) => quiet || isEmptyChart(charts.find((c) => c.id === id)!);
  return page({
    title: 'Traffic',
    viewer: input.viewer,
    active: 'traffic',
    scripts: ['uPlot.iife.min.js', 'charts.js'],
    styles: ['uPlot.min.css'],
    body: html`${trafficPicker(picker)}
      <p class="hint">${WINDOW_LABELS[series.window]} of ${who}, per ${step} (UTC). Counts arrive a few seconds after the requests.</p>
      <p><a href="${trafficCsvHref(picker.environment, series.window, picker.key?.id)}" download>Download as CSV</a></p>
      ${summary(series.points)} ${rotation ? rotation.body : ''}
      <section aria-labelledby="charts-title">
        <h2 id="charts-title">Per ${step}</h2>
        <div class="charts">
          ${chartFigure('status', `Requests per ${step} by status class (UTC)`, empty('status'))}
          ${chartFigure('endpoints', `Requests per ${step} by endpoint (UTC)`, empty('endpoints'))}
          ${chartFigure('refused', `Refused requests per ${step}: 401, 403, 429 (UTC)`, quiet)}
          ${chartFigure('latency', `Latency p50 and p95 per ${step} (ms, UTC)`, empty('latency'))}
        </div>
        ${endpointTable(series.points)} ${stepTable(series)}
      </section>
      ${input.usage ? usageSection(input.usage, picker.keys, Boolean(picker.key)) : ''} ${chartDataBlock({ x: chartX(series), charts })}`,
  });
}
