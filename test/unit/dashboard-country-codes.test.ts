import { readFileSync } from 'node:fs';
import { countryName, numericCountryCode } from '../../dashboard/geo/country-codes';

describe('country codes for the world map', () => {
  it('maps the alpha-2 codes traffic records to the numeric ids of the map', () => {
    expect(numericCountryCode('US')).toBe('840');
    expect(numericCountryCode('GB')).toBe('826');
    expect(numericCountryCode('JP')).toBe('392');
    expect(numericCountryCode('NL')).toBe('528');
    expect(numericCountryCode('FR')).toBe('250');
    expect(numericCountryCode('ZZ')).toBeUndefined();
  });

  it('covers every country the 110m map draws with an id', () => {
    const atlas = JSON.parse(readFileSync(require.resolve('world-atlas/countries-110m.json'), 'utf8')) as {
      objects: { countries: { geometries: { id?: string }[] } };
    };
    const ids = atlas.objects.countries.geometries.map((g) => g.id).filter((id): id is string => Boolean(id));
    expect(ids.length).toBeGreaterThan(170);
    const numericIds = new Set<string>();
    for (let a = 65; a <= 90; a++)
      for (let b = 65; b <= 90; b++) {
        const numeric = numericCountryCode(String.fromCharCode(a, b));
        if (numeric) numericIds.add(numeric);
      }
    expect(ids.filter((id) => !numericIds.has(id))).toEqual([]);
  });

  it('names countries in English, and ZZ as unknown', () => {
    expect(countryName('US')).toBe('United States');
    expect(countryName('GB')).toBe('United Kingdom');
    expect(countryName('JP')).toBe('Japan');
    expect(countryName('ZZ')).toBe('Unknown');
  });
});
