import { safeReturnPath, signInFor } from '../../dashboard/http/return-to';

describe('the page to return to after signing in', () => {
  it.each([
    ['/traffic/live?window=24h', '/traffic/live?window=24h'],
    ['/keys/live', '/keys/live'],
    ['/audit#latest', '/audit#latest'],
    ['/patterns/../audit', '/audit'],
  ])('keeps the path %s of this dashboard', (value, expected) => {
    expect(safeReturnPath(value)).toBe(expected);
  });

  it.each([
    '//evil.example',
    '//evil.example/keys',
    'https://evil.example/',
    'http:/evil.example',
    '/\\evil.example',
    '/.//evil.example',
    '/..//evil.example',
    '/a/..//evil.example',
    '/%2e//evil.example',
    '/%2E%2E//evil.example/keys',
    '/./\\evil.example',
    '\\\\evil.example',
    '\\/evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    'javascript:alert(1)',
    'keys/test',
    '',
    '/signin',
    '/signin?next=%2Faudit',
    '/' + 'a'.repeat(2000),
  ])('refuses %j', (value) => {
    expect(safeReturnPath(value)).toBeNull();
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 42, ['/audit'], { path: '/audit' }]) expect(safeReturnPath(value)).toBeNull();
  });

  it('asks for no return to the default landing page, and to nothing unsafe', () => {
    expect(signInFor('/traffic/test?key=k1')).toBe('/signin?next=%2Ftraffic%2Ftest%3Fkey%3Dk1');
    expect(signInFor('/keys/test')).toBe('/signin');
    expect(signInFor('/')).toBe('/signin');
    expect(signInFor('//evil.example')).toBe('/signin');
  });
});
