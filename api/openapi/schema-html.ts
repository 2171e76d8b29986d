import type { oas32 } from 'zod-openapi';

type Schema = oas32.SchemaObject | oas32.ReferenceObject;

export const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Escaped text with `code spans` as <code>. */
export const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

export const isRef = (value: unknown): value is oas32.ReferenceObject =>
  typeof value === 'object' && value !== null && typeof (value as { $ref?: unknown }).$ref === 'string';

/** `#/components/schemas/Profile` → `Profile`. */
export const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

export const schemaAnchor = (name: string) => `schema-${name}`;

const refLink = (ref: string) => `<a href="#${schemaAnchor(refName(ref))}">${escapeHtml(refName(ref))}</a>`;

const literal = (value: unknown) => `<code>${escapeHtml(JSON.stringify(value))}</code>`;

/** zod's bounds of int(): not real limits, so not worth showing. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** A one-line summary of a schema: its type, value set and bounds. */
export function schemaSummary(schema: Schema | undefined): string {
  if (schema === undefined || schema === true) return 'any';
  if (schema === false) return 'nothing';
  if (isRef(schema)) return refLink(schema.$ref);
  if (schema.anyOf ?? schema.oneOf) return (schema.anyOf ?? schema.oneOf)!.map(schemaSummary).join(' or ');
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum) return `one of ${schema.enum.map(literal).join(', ')}`;
  const types = ([] as string[]).concat(schema.type ?? 'any');
  if (types.length === 1 && types[0] === 'null') return 'null';
  const parts: string[] = [];
  if (types.includes('array')) parts.push(`array of ${schemaSummary(schema.items)}`);
  else if (types.includes('object')) {
    const values = typeof schema.additionalProperties === 'object' ? schemaSummary(schema.additionalProperties) : undefined;
    parts.push(schema.properties ? 'object' : values && values !== 'any' ? `object of ${values}` : 'object (any JSON)');
  } else parts.push(types.filter((type) => type !== 'null').join(' or '));
  if (schema.format) parts.push(`(${escapeHtml(schema.format)})`);
  else if (schema.pattern) parts.push(`matching <code>${escapeHtml(schema.pattern)}</code>`);
  const range = (lowest: number | undefined, max: number | undefined, unit: string) => {
    const min = lowest === undefined || lowest <= -UNBOUNDED ? undefined : lowest;
    const upper = max === undefined || max >= UNBOUNDED ? undefined : max;
    if (min === undefined && upper === undefined) return;
    if (min !== undefined && upper !== undefined) parts.push(`${min}–${upper}${unit}`);
    else parts.push(min !== undefined ? `≥ ${min}${unit}` : `≤ ${upper}${unit}`);
  };
  range(schema.minLength || undefined, schema.maxLength, ' characters');
  range(schema.minimum, schema.maximum, '');
  range(schema.minItems, schema.maxItems, ' items');
  if (types.includes('null')) parts.push('or null');
  return parts.join(' ');
}

interface Row {
  name: string;
  required: boolean;
  schema: Schema;
}

/** The fields of an object schema, nested objects flattened into dotted names. */
function rows(schema: Schema, prefix = ''): Row[] {
  if (isRef(schema) || typeof schema === 'boolean' || !schema.properties) return [];
  return Object.entries(schema.properties).flatMap(([key, child]) => {
    const name = `${prefix}${key}`;
    const row = { name, required: (schema.required ?? []).includes(key), schema: child };
    if (typeof child === 'object' && !isRef(child) && child.type === 'array')
      return [row, ...(child.items ? rows(child.items, `${name}[].`) : [])];
    return [row, ...rows(child, `${name}.`)];
  });
}

const description = (schema: Schema) => (typeof schema === 'object' && schema.description ? prose(schema.description) : '');

/**
 * A table whose cells name their column (`data-label`): on a narrow screen the page's CSS
 * shows each row as a card of labelled lines instead of columns wider than the screen. The
 * explicit roles keep it a table for screen readers when CSS changes its display.
 */
export function htmlTable(head: string[], body: string[][]): string {
  const labels = head.map((cell) => escapeHtml(cell.replace(/<[^>]*>/g, '')));
  const headRow = head.map((cell) => `<th scope="col" role="columnheader">${cell}</th>`).join('');
  const bodyRows = body.map(
    (row) => `<tr role="row">${row.map((cell, i) => `<td role="cell" data-label="${labels[i] ?? ''}">${cell}</td>`).join('')}</tr>`,
  );
  return `<table role="table"><thead role="rowgroup"><tr role="row">${headRow}</tr></thead><tbody role="rowgroup">${bodyRows.join('\n')}</tbody></table>`;
}

/** A schema as HTML: a field table for objects, else its summary. */
export function schemaHtml(schema: Schema): string {
  const fields = rows(schema);
  if (fields.length === 0) return `<p>${schemaSummary(schema)}</p>`;
  const strict = typeof schema === 'object' && !isRef(schema) && schema.additionalProperties === false;
  return `${htmlTable(
    ['Field', 'Presence', 'Type', 'Description'],
    fields.map((row) => [
      `<code>${escapeHtml(row.name)}</code>`,
      row.required ? 'required' : 'optional',
      schemaSummary(row.schema),
      description(row.schema),
    ]),
  )}${strict ? '<p class="note">No other fields.</p>' : ''}`;
}
