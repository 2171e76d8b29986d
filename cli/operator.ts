import type { KeyActor } from '../shared/credentials/key-lifecycle';

/** The CLI's changes join the account's audit log (shown on the dashboard) as the operator's. */
export const OPERATOR: KeyActor = { name: 'operator (cli)', country: null };
