import { csvCell, csvFileName, csvRow, inertCell } from '../../dashboard/http/csv';

describe('inertCell', () => {
  it.each(['=1+1', '+1', '-1', '@SUM(A1)', '\tcmd', '\rcmd', '=HYPERLINK("http://x","y")'])(
    'prefixes %j, which a spreadsheet would read as a formula, with a single quote',
    (text) => expect(inertCell(text)).toBe(`'${text}`),
  );

  it.each(['checkout', '2026-11-29T06:40:12.000Z', "'quoted", ' =leading space', 'a=b', ''])('leaves %j as it is', (text) =>
    expect(inertCell(text)).toBe(text),
  );
});

describe('csvCell and csvRow (RFC 4180)', () => {
  it('quotes a cell holding a comma, a quote or a line break, doubling its quotes', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('plain')).toBe('plain');
  });

  it('escapes a formula before quoting, so the quote is inside the field', () => {
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell('\r=1')).toBe(`"'\r=1"`);
    expect(csvCell('-2')).toBe("'-2");
  });

  it('writes numbers as numbers (a negative one stays a number) and null or non-finite as empty', () => {
    expect(csvCell(-2)).toBe('-2');
    expect(csvCell(2.5)).toBe('2.5');
    expect(csvCell(null)).toBe('');
    expect(csvCell(Number.NaN)).toBe('');
  });

  it('ends each record with CRLF', () => {
    expect(csvRow(['a', 1, null, '+x'])).toBe("a,1,,'+x\r\n");
  });
});

describe('csvFileName', () => {
  it('keeps letters, digits, dots and underscores, dashes between parts', () => {
    expect(csvFileName(['traffic', 'acme', '=HYPERLINK("http://x","y")', '1h'])).toBe('traffic-acme-HYPERLINK-http-x-y-1h.csv');
    expect(csvFileName(['audit-log', '../../etc', '2026-11-29'])).toBe('audit-log-etc-2026-11-29.csv');
    expect(csvFileName(['"; filename=x'])).toBe('filename-x.csv');
    expect(csvFileName(['***'])).toBe('export.csv');
  });
});
