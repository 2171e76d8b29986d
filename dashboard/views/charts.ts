import type { TrafficSeries } from '../../shared/traffic/traffic-queries';
import { html, raw, type Html } from './html';

/** One chart: named lines over the series' steps, drawn by /assets/charts.js with uPlot. */
export interface ChartSpec {
  id: string;
  unit: string;
  series: { label: string; values: (number | null)[] }[];
}

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
      series: (['2xx', '3xx', '4xx', '5xx'] as const).map((c) => ({ label: c, values: points.map((p) => p.byClass[c]) })),
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
        { label: '401', values: points.map((p) => p.unauthorized) },
        { label: '403', values: points.map((p) => p.forbidden) },
        { label: '429', values: points.map((p) => p.rateLimited) },
      ],
    },
    {
      id: 'latency',
      unit: 'ms',
      series: [
        { label: 'p50', values: points.map((p) => p.p50Ms) },
        { label: 'p95', values: points.map((p) => p.p95Ms) },
      ],
    },
  ];
}

/** A chart's place on the page: hidden from screen readers, which read the table instead. */
export const chartFigure = (id: string, caption: string): Html =>
  html`<figure class="chart-figure">
    <figcaption>${caption}</figcaption>
    <div class="chart" data-chart="${id}" aria-hidden="true"></div>
  </figure>`;

/** The charts' data as a JSON block (not a script: the page's CSP runs only the dashboard's own files). */
export const chartDataBlock = (data: ChartData): Html =>
  raw(`<script type="application/json" id="chart-data">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`);
