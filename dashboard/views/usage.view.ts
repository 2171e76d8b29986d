import type { ApiKeyRecord } from '../../shared/keys/key.repository';
import type { QuotaForecast } from '../../shared/traffic/quota-forecast';
import { html, type Html } from './html';

const fmt = (n: number) => n.toLocaleString('en-US');
const percent = (share: number | null) => (share === null ? '' : ` (${Math.round(share * 100)} %)`);

function row(label: Html | string, used: number, quota: number | null, forecast: number, forecastShare: number | null): Html {
  const warn = forecastShare !== null && forecastShare >= 0.9;
  return html`<tr>
    <th scope="row" data-label="Key">${label}</th>
    <td data-label="Used">${fmt(used)}${percent(quota ? used / quota : null)}</td>
    <td data-label="Quota">${quota === null ? 'no monthly quota' : fmt(quota)}</td>
    <td data-label="Month-end forecast" class="${warn ? 'warning' : ''}">${fmt(forecast)}${percent(forecastShare)}</td>
  </tr>`;
}

/**
 * Month-to-date usage of live keys against the plan's monthly quota (which applies to each
 * key), with the forecast for the month's end; the account's row adds its keys up.
 */
export function usageSection(usage: QuotaForecast[], keys: ApiKeyRecord[], oneKey: boolean): Html {
  const label = (u: QuotaForecast) => {
    const key = keys.find((k) => k.id === u.keyId);
    return key ? `${key.name} …${key.last4}` : u.keyName;
  };
  const month = usage[0]?.month;
  const quota = usage[0]?.quota ?? null;
  const used = usage.reduce((s, u) => s + u.used, 0);
  const forecast = usage.reduce((s, u) => s + u.forecast, 0);
  const accountQuota = quota === null ? null : quota * usage.length;
  return html`<section class="card" aria-labelledby="usage-title" data-section="usage">
    <h2 id="usage-title">Month-to-date usage${month ? ` (${month})` : ''}</h2>
    ${
      usage.length === 0
        ? html`<p>No live keys.</p>`
        : html`<table class="data">
            <caption>
              Requests counted against the plan's quota (admitted ones) and the month-end forecast at the recent pace
            </caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Used</th>
                <th scope="col">Quota</th>
                <th scope="col">Month-end forecast</th>
              </tr>
            </thead>
            <tbody>
              ${usage.map((u) => row(label(u), u.used, u.quota, u.forecast, u.forecastShare))}
              ${oneKey ? '' : row(html`<strong>Account (all live keys)</strong>`, used, accountQuota, forecast, accountQuota ? forecast / accountQuota : null)}
            </tbody>
          </table>`
    }
  </section>`;
}
