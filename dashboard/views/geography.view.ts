import type { CountryCount } from '../../shared/traffic/traffic-queries';
import { countryName, numericCountryCode } from '../geo/country-codes';
import type { WorldMap } from '../geo/world-map';
import { html, type Html } from './html';
import { page, type Viewer } from './layout';
import { keyLabel, trafficPicker, WINDOW_LABELS, type PickerState } from './traffic-picker';

export interface GeographyPageInput {
  viewer: Viewer;
  picker: PickerState;
  counts: CountryCount[];
  map: WorldMap;
}

const fmt = (n: number) => n.toLocaleString('en-US');
/** Shades 1–5 by the share of the busiest country (a square root, so small countries still show). */
const shade = (requests: number, max: number) => (requests === 0 ? 0 : Math.max(1, Math.ceil(Math.sqrt(requests / max) * 5)));

function worldSvg(map: WorldMap, counts: CountryCount[], caption: string): Html {
  const byNumeric = new Map<string, number>();
  for (const c of counts) {
    const numeric = numericCountryCode(c.country);
    if (numeric) byNumeric.set(numeric, c.requests);
  }
  const max = Math.max(1, ...counts.map((c) => c.requests));
  return html`<figure class="world">
    <svg viewBox="0 0 ${map.width} ${map.height}" role="img" aria-labelledby="map-caption" focusable="false">
      ${map.countries.map((shape) => {
        const requests = byNumeric.get(shape.id) ?? 0;
        return html`<path d="${shape.d}" class="shade-${shade(requests, max)}" data-country="${shape.id}"
          ><title>${shape.name}: ${fmt(requests)} requests</title></path
        >`;
      })}
    </svg>
    <figcaption id="map-caption">${caption}</figcaption>
  </figure>`;
}

function countryTable(counts: CountryCount[]): Html {
  if (counts.length === 0) return html`<p>No requests in this period.</p>`;
  const sum = counts.reduce((s, c) => s + c.requests, 0);
  return html`<table class="data countries">
    <caption>
      Requests per client country, most first
    </caption>
    <thead>
      <tr>
        <th scope="col">Country</th>
        <th scope="col">Code</th>
        <th scope="col">Requests</th>
        <th scope="col">Share</th>
      </tr>
    </thead>
    <tbody>
      ${counts.map(
        (c) =>
          html`<tr>
            <th scope="row" data-label="Country">${countryName(c.country)}</th>
            <td data-label="Code">${c.country}</td>
            <td data-label="Requests">${fmt(c.requests)}</td>
            <td data-label="Share">${((c.requests / sum) * 100).toFixed(1)} %</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function geographyPage(input: GeographyPageInput): string {
  const { picker, counts } = input;
  const who = picker.key ? `key “${keyLabel(picker.key)}”` : `all ${picker.environment} keys`;
  const caption = `Requests per client country, ${WINDOW_LABELS[picker.window].toLowerCase()}, ${who}: darker is more.`;
  return page({
    title: 'Geography',
    viewer: input.viewer,
    active: 'geography',
    body: html`${trafficPicker(picker)}
      <p class="hint">
        The country comes from the client's address, resolved by the API from an offline database; the address is not kept. “Unknown” counts
        private and unassigned addresses.
      </p>
      ${worldSvg(input.map, counts, caption)} ${countryTable(counts)}`,
  });
}
