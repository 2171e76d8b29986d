import { DIMENSIONS, DIMENSION_NAMES, type Pins } from '../../shared/domain/arms';
import { AppError, type FieldError } from '../../shared/errors/app-error';
import type { ProfileResponse } from '../../shared/profile/profile';
import type { ProfileUpdate } from '../schemas/request.schemas';

/** Fields of the profile object that a PUT may carry but never changes. */
const READ_ONLY_FIELDS = ['userId', 'pinned', 'profilePhase', 'interactionCount', 'lastUpdated', 'profileVersion'] as const;
type ReadOnlyField = (typeof READ_ONLY_FIELDS)[number];

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((item) => b.includes(item));

/** Whether a read-only field sent back holds the profile's current value (lastUpdated: the same instant, pinned: the same names). */
function sameValue(field: ReadOnlyField, sent: unknown, current: ProfileResponse): boolean {
  if (field === 'pinned') return sameSet(sent as string[], current.pinned);
  if (field === 'lastUpdated') return Date.parse(sent as string) === Date.parse(current.lastUpdated);
  return sent === current[field];
}

function readOnlyError(field: ReadOnlyField, current: ProfileResponse): FieldError {
  if (field === 'userId') return { field, message: `must be ${JSON.stringify(current.userId)}, the userId in the path` };
  const hint = field === 'pinned' ? '; pin a dimension with a value and unpin it with null' : '';
  return { field, message: `is read-only: it is ${JSON.stringify(current[field])} now; send that or leave it out${hint}` };
}

/**
 * The pins a PUT asks for, given the profile as it is now (`current`, with `pins`). A value pins
 * its dimension and null unpins it. A body carrying `pinned` is a profile as GET returned it:
 * there a value equal to the current one is left as it is (pinned or learned) and only changed
 * values pin. Read-only fields must hold the current values: otherwise a VALIDATION_ERROR naming
 * each one (a stale profileVersion means the profile changed since it was read).
 */
export function requestedPins(update: ProfileUpdate, current: ProfileResponse, pins: Pins): Pins {
  const mismatched = READ_ONLY_FIELDS.filter((field) => update[field] !== undefined && !sameValue(field, update[field], current));
  if (mismatched.length > 0) {
    const fields = mismatched.map((field) => readOnlyError(field, current));
    throw new AppError('VALIDATION_ERROR', `Invalid request: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, { fields });
  }
  const roundTrip = update.pinned !== undefined;
  const next: Pins = { ...pins };
  for (const dim of DIMENSION_NAMES) {
    const field = DIMENSIONS[dim].profileField;
    const value = update[field];
    if (value === null) delete next[dim];
    else if (value !== undefined && !(roundTrip && value === current[field])) (next as Record<string, string>)[dim] = value;
  }
  return next;
}
