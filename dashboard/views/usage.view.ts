import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import { accountForecast, type QuotaForecast } from '../../shared/traffic/quota-forecast';
import { html, type Html } from './html';

const fmt = (n: number) => n.toLocaleString('en-US');
const percent = (share: number | null) => (share === null ? '' : ` (${Math.round(share * 100)} %)`);

function row(label: Html | string, used: number, forecast: number, quota: number | null): Html {
  const share = (n: number) => percent(quota ? n / quota : null);
  const warn = quota !== null && forecast / quota >= 0.9;
  return html`<tr>
    <th scope="row" data-label="Key">${label}</th>
    <td data-label="Used">${fmt(used)}${share(used)}</td>
    <td data-label="Month-end forecast" class="${warn ? 'warning' : ''}">${fmt(forecast)}${share(forecast)}</td>
  </tr>`;
}

/**
 * Month-to-date usage of live keys against the account's monthly quota (one quota for all its
 * live keys together), with the forecast for the month's end: each key's share, then the account.
 */
export function usageSection(usage: QuotaForecast[], keys: ApiKeyRecord[], oneKey: boolean): Html {
  const label = (u: QuotaForecast) => {
    const key = keys.find((k) => k.id === u.keyId);
    return key ? `${key.name} …${key.last4}` : u.keyName;
  };
  const month = usage[0]?.month;
  const quota = usage[0]?.quota ?? null;
  const account = accountForecast(usage);
  return html`<section class="card" aria-labelledby="usage-title" data-section="usage">
    <h2 id="usage-title">Month-to-date usage${month ? ` (${month})` : ''}</h2>
    ${
      usage.length === 0
        ? html`<p>No live keys.</p>`
        : html`<p data-quota>
              Monthly quota of the account, all live keys together:
              <strong>${quota === null ? 'none (no monthly quota on this plan)' : `${fmt(quota)} requests`}</strong>
            </p>
            <table class="data">
              <caption>
                Requests counted against the quota (admitted ones) and the month-end forecast at the recent pace, as shares of the account's
                quota
              </caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Used</th>
                  <th scope="col">Month-end forecast</th>
                </tr>
              </thead>
              <tbody>
                ${usage.map((u) => row(label(u), u.used, u.forecast, quota))}
                ${oneKey || !account ? '' : row(html`<strong>Account (all live keys)</strong>`, account.used, account.forecast, quota)}
              </tbody>
            </table>`
    }
  </section>`;
}
