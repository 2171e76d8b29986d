import type { Request } from 'express';
import { z } from 'zod';
import type { AuditFilter } from '../../shared/audit/audit.repository';
import { AUDIT_ACTIONS } from '../../shared/domain/audit-actions';
import { AppError } from '../../shared/errors/app-error';

const DAY_MS = 86_400_000;

/** A calendar date in UTC, as `<input type="date">` sends it. */
const utcDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'expected a date as YYYY-MM-DD (UTC), e.g. 2026-11-29', abort: true })
  .refine(
    (text) => {
      const at = Date.parse(`${text}T00:00:00Z`);
      // 2026-02-30 parses as 2026-03-02: only a date that comes back as written is one.
      return Number.isFinite(at) && new Date(at).toISOString().startsWith(text);
    },
    { error: 'expected a real date as YYYY-MM-DD (UTC)' },
  );

const queryShape = z
  .object({
    actor: z.string().trim().min(1, { error: 'expected an email' }).max(254, { error: 'expected at most 254 characters' }).optional(),
    action: z.enum(AUDIT_ACTIONS, { error: `expected one of ${AUDIT_ACTIONS.join(', ')}` }).optional(),
    key: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,100}$/, { error: 'expected a key id such as key_…' })
      .optional(),
    from: utcDate.optional(),
    to: utcDate.optional(),
    before: z
      .string()
      .regex(/^\d{1,18}$/, { error: 'expected an entry id (digits only)' })
      .optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { error: 'expected a date on or after "from"', path: ['to'] });

/** The audit log's filters as the query gives them (dates as YYYY-MM-DD), to show and to link with. */
export type AuditQuery = Omit<z.infer<typeof queryShape>, 'before'>;

export interface ChosenAudit {
  query: AuditQuery;
  filter: AuditFilter;
  before?: string;
}

/** The filters as a query string (leading `?`, or empty), with `extra` added: for the next page's and the export's links. */
export function auditQueryString(query: AuditQuery, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, ...extra })) if (value !== undefined) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * Reads the audit log's filters from the query: actor, action, key, from and to (UTC dates, both
 * included) and `before` (paging). An empty field is no filter, as the form sends it; any other
 * bad value is a 400 naming each field.
 */
export function chosenAudit(req: Request): ChosenAudit {
  const raw: Record<string, unknown> = {};
  for (const name of ['actor', 'action', 'key', 'from', 'to', 'before']) {
    const value = req.query[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const parsed = queryShape.safeParse(raw);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message }));
    throw new AppError(
      'VALIDATION_ERROR',
      `The audit log's filters are not valid: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`,
      { fields },
    );
  }
  const { before, ...query } = parsed.data;
  const filter: AuditFilter = {
    actor: query.actor,
    action: query.action,
    keyId: query.key,
    from: query.from ? new Date(`${query.from}T00:00:00Z`) : undefined,
    // The whole "to" day is included.
    to: query.to ? new Date(Date.parse(`${query.to}T00:00:00Z`) + DAY_MS) : undefined,
  };
  return { query, filter, before };
}
