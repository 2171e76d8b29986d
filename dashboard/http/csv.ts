import type { Response } from 'express';

/** A CSV cell: text is escaped, numbers are written as they are, null is empty. */
export type CsvValue = string | number | null;

/**
 * A spreadsheet reads a cell starting with one of these as a formula (or, for tab and carriage
 * return, may strip them and read what follows as one).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Makes text inert in a spreadsheet: a cell that would start a formula is prefixed with a
 * single quote, which spreadsheets show as text. Applies to text only: numbers are never
 * formulas, so a negative count stays a number.
 */
export function inertCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** One cell as RFC 4180 writes it: quoted, with quotes doubled, when it holds a comma, quote or line break. */
export function csvCell(value: CsvValue): string {
  if (value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = inertCell(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, ended by CRLF as RFC 4180 asks. */
export function csvRow(values: CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/**
 * A download's file name from its parts (account, key name, …): each kept to letters, digits,
 * dots and underscores with dashes between, so any name is safe in Content-Disposition and on
 * any disk.
 */
export function csvFileName(parts: string[]): string {
  const safe = parts
    .map((part) =>
      part
        .replace(/[^A-Za-z0-9._]+/g, '-')
        .replace(/^[-.]+|-+$/g, '')
        .slice(0, 40),
    )
    .filter(Boolean);
  return `${safe.join('-') || 'export'}.csv`;
}

/** Sends a download: CSV with a header row, never cached, saved as `fileName`. */
export function startCsv(res: Response, fileName: string, header: string[]): void {
  // Only csvFileName's characters: nothing to quote or encode.
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8; header=present');
  res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.write(csvRow(header));
}
