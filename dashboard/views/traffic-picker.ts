import type { Environment } from '../../shared/domain/environment';
import type { ApiKeyRecord } from '../../shared/credentials/key.repository';
import type { TrafficWindow } from '../../shared/traffic/traffic-queries';
import { html, type Html } from './html';

export const WINDOW_LABELS: Record<TrafficWindow, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '30d': 'Last 30 days' };

export interface PickerState {
  /** Where the form goes: `/traffic` or `/geography`. */
  base: '/traffic' | '/geography';
  environment: Environment;
  window: TrafficWindow;
  keys: ApiKeyRecord[];
  key?: ApiKeyRecord;
}

export const keyLabel = (key: ApiKeyRecord) => `${key.name} …${key.last4}`;

/** The address of a page for another environment, key or window, keeping the rest. */
export function scopeHref(
  state: PickerState,
  change: Partial<{ environment: Environment; window: TrafficWindow; keyId: string | null }>,
): string {
  const env = change.environment ?? state.environment;
  const keyId = change.keyId === undefined ? state.key?.id : (change.keyId ?? undefined);
  const params = new URLSearchParams({ window: change.window ?? state.window });
  if (keyId && env === state.environment) params.set('key', keyId);
  return `${state.base}/${env}?${params.toString()}`;
}

/** Environment tabs and a plain GET form choosing key and window: works by keyboard and without JS. */
export function trafficPicker(state: PickerState): Html {
  const envTab = (env: Environment, label: string) =>
    html`<li>
      <a href="${scopeHref(state, { environment: env, keyId: null })}" ${env === state.environment ? html` aria-current="page"` : ''}
        >${label}</a
      >
    </li>`;
  return html`<nav class="tabs" aria-label="Environment">
      <ul>
        ${envTab('test', 'Test')}${envTab('live', 'Live')}
      </ul>
    </nav>
    <form method="get" action="${state.base}/${state.environment}" class="picker">
      <div>
        <label for="pick-key">Key</label>
        <select id="pick-key" name="key">
          <option value="">Whole account (all ${state.environment} keys)</option>
          ${state.keys.map((k) => html`<option value="${k.id}" ${k.id === state.key?.id ? html` selected` : ''}>${keyLabel(k)}</option>`)}
        </select>
      </div>
      <div>
        <label for="pick-window">Period</label>
        <select id="pick-window" name="window">
          ${(Object.keys(WINDOW_LABELS) as TrafficWindow[]).map(
            (w) => html`<option value="${w}" ${w === state.window ? html` selected` : ''}>${WINDOW_LABELS[w]}</option>`,
          )}
        </select>
      </div>
      <button type="submit">Show</button>
    </form>`;
}
