import type { TrafficSeries } from '../../shared/traffic/traffic-queries';
import { html, raw, type Html } from './html';

/** One chart: named lines over the series' steps, drawn by /assets/charts.js with uPlot. */
export interface ChartSpec {
  id: string;
  /** `requests` charts are counts: whole-number ticks. */
  unit: string;
  series: { label: string; values: (number | null)[]; color?: string }[];
}

/**
 * Colours that tell success from refusals at a glance: green for 2xx, and for each refusal a hue
 * of its own (401 purple, 403 amber, 429 red), the same on every chart.
 */
export const SERIES_COLORS: Record<string, string> = {
  '2xx': '#1a7f37',
  '3xx': '#0969da',
  '4xx': '#bc4c00',
  '5xx': '#6e7781',
  '401': '#8250df',
  '403': '#9a6700',
  '429': '#d1242f',
  p50: '#0969da',
  p95: '#8250df',
};

/** Whether a chart has nothing to draw: every value zero or missing. */
export const isEmptyChart = (chart: ChartSpec): boolean => chart.series.every((s) => s.values.every((v) => !v));

/** The x axis (seconds, as uPlot wants) and every chart of a page, embedded as JSON data. */
export interface ChartData {
  x: number[];
  charts: ChartSpec[];
}

export const chartX = (series: TrafficSeries): number[] => series.points.map((p) => Date.parse(p.at) / 1000);

/** The traffic page's four charts from one series. */
export function trafficCharts(series: TrafficSeries): ChartSpec[] {
  const points = series.points;
  const endpoints = [...new Set(points.flatMap((p) => Object.keys(p.byEndpoint)))].sort();
  const sumClasses = (c: Record<string, number> | undefined) => (c ? Object.values(c).reduce((a, b) => a + b, 0) : 0);
  return [
    {
      id: 'status',
      unit: 'requests',
      series: (['2xx', '3xx', '4xx', '5xx'] as const).map((c) => ({
        label: c,
        values: points.map((p) => p.byClass[c]),
        color: SERIES_COLORS[c],
      })),
    },
    {
      id: 'endpoints',
      unit: 'requests',
      series: endpoints.map((e) => ({ label: e, values: points.map((p) => sumClasses(p.byEndpoint[e])) })),
    },
    {
      id: 'refused',
      unit: 'requests',
      series: [
        { label: '401', values: points.map((p) => p.unauthorized), color: SERIES_COLORS['401'] },
        { label: '403', values: points.map((p) => p.forbidden), color: SERIES_COLORS['403'] },
        { label: '429', values: points.map((p) => p.rateLimited), color: SERIES_COLORS['429'] },
      ],
    },
    {
      id: 'latency',
      unit: 'ms',
      series: [
        { label: 'p50', values: points.map((p) => p.p50Ms), color: SERIES_COLORS.p50 },
        { label: 'p95', values: points.map((p) => p.p95Ms), color: SERIES_COLORS.p95 },
      ],
    },
  ];
}

/**
 * A chart's place on the page: hidden from screen readers, which read the table instead. With
 * nothing to draw it says so, rather than showing bare axes.
 */
export const chartFigure = (id: string, caption: string, empty = false): Html =>
  html`<figure class="chart-figure">
    <figcaption>${caption}</figcaption>
    ${
      empty
        ? html`<p class="chart-empty" data-chart-empty="${id}">No requests in this period</p>`
        : html`<div class="chart" data-chart="${id}" aria-hidden="true"></div>`
    }
  </figure>`;

/** The charts' data as a JSON block (not a script: the page's CSP runs only the dashboard's own files). */
export const chartDataBlock = (data: ChartData): Html =>
  raw(`<script type="application/json" id="chart-data">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`);
