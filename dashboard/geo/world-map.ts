import { readFileSync } from 'node:fs';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { feature } from 'topojson-client';

/** One country's outline, projected once for the map's fixed view box. */
export interface CountryShape {
  /** ISO 3166-1 numeric, as world-atlas names its features; empty for the few it leaves unnamed. */
  id: string;
  name: string;
  d: string;
}

export interface WorldMap {
  width: number;
  height: number;
  countries: CountryShape[];
}

const WIDTH = 960;
const HEIGHT = 480;

// d3-geo ships only as an ES module and this build emits CommonJS, whose `import()` TypeScript
// would turn into require(): this keeps a real dynamic import.
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<typeof import('d3-geo')>;

async function project(): Promise<WorldMap> {
  const { geoEqualEarth, geoPath } = await importModule('d3-geo');
  const topology = JSON.parse(readFileSync(require.resolve('world-atlas/countries-110m.json'), 'utf8')) as Topology<{
    countries: GeometryCollection<{ name: string }>;
  }>;
  const all = feature(topology, topology.objects.countries);
  // Antarctica has no clients and would take a fifth of the height.
  const countries = { ...all, features: all.features.filter((f) => f.properties.name !== 'Antarctica') };
  const projection = geoEqualEarth().fitExtent(
    [
      [4, 4],
      [WIDTH - 4, HEIGHT - 4],
    ],
    countries,
  );
  const path = geoPath(projection).digits(1);
  return {
    width: WIDTH,
    height: HEIGHT,
    countries: countries.features
      .map((f) => ({ id: f.id === undefined ? '' : String(f.id), name: f.properties.name, d: path(f) ?? '' }))
      .filter((shape) => shape.d !== ''),
  };
}

let projected: Promise<WorldMap> | undefined;

/** The world's countries as SVG paths, projected on first use and kept for the process's life. */
export function worldMap(): Promise<WorldMap> {
  projected ??= project();
  return projected;
}
