import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The project's Markdown stays navigable: every relative link names a file that exists and,
 * with a `#fragment`, a heading (as GitHub makes its anchor) or an `id` in it; and BENCHMARKS
 * keeps to current results (history is in git and the ADRs).
 */
const ROOT = resolve(__dirname, '../..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.cos', 'coverage']);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, each space a `-`, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const text = heading[1]!.replace(/<[^>]+>/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
      const slug = text
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/ /g, '-');
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

const files = markdownFiles(ROOT);
const links = files.flatMap((file) => {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ file: relative(ROOT, file), target }));
});

describe('Markdown links', () => {
  it('finds the documents and their links', () => {
    expect(files.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['README.md', 'docs/API.md', 'docs/BENCHMARKS.md']));
    expect(links.length).toBeGreaterThan(50);
  });

  it('resolve every relative link to a file and, with a fragment, to a heading or id in it', () => {
    const anchors = new Map<string, Set<string>>();
    const broken = links.filter(({ file, target }) => {
      const [path, fragment] = target.split('#', 2) as [string, string | undefined];
      const into = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path));
      if (!existsSync(into)) return true;
      if (!fragment || !into.endsWith('.md')) return false;
      if (!anchors.has(into)) anchors.set(into, anchorsOf(readFileSync(into, 'utf8')));
      return !anchors.get(into)!.has(fragment);
    });
    expect(broken).toEqual([]);
  });

  it("makes GitHub's anchors: headings with punctuation dropped, repeats numbered, explicit ids", () => {
    const anchors = anchorsOf('# Load: `npm run bench:load`\n## Results\n## Results\n<a id="error-x"></a>');
    expect([...anchors]).toEqual(['load-npm-run-benchload', 'results', 'results-1', 'error-x']);
  });
});

/**
 * A path of this repository as documents and comments name it (`shared/db/partitions.ts`,
 * docs/adr/0013-monthly-partitions.md). Placeholders (`api/routes/x.ts`, a migration's
 * `YYYYMMDDHHmm_verb_noun.ts`) name no file.
 */
const REPOSITORY_PATH = /\b(?:shared|api|worker|scripts|dashboard|cli|sdk|sdk-python|test|docs)\/[\w./-]+\.(?:ts|lua|md|py|sh|json)\b/g;
const placeholder = (path: string) => /(^|\/)(x|y|x\.[\w-]+)\.\w+$|YYYY/.test(path);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|lua|py)$/.test(name) ? [path] : [];
  });
}

describe('paths named in documents and comments', () => {
  it('name files that exist: every repository path in the Markdown, every document in the code', () => {
    const named = [
      ...files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(REPOSITORY_PATH)].map((m) => ({ file, path: m[0] }))),
      ...['shared', 'api', 'worker', 'dashboard', 'cli', 'scripts', 'sdk', 'sdk-python'].flatMap((top) =>
        sourceFiles(join(ROOT, top)).flatMap((file) =>
          [...readFileSync(file, 'utf8').matchAll(REPOSITORY_PATH)]
            .filter((m) => m[0].startsWith('docs/'))
            .map((m) => ({ file, path: m[0] })),
        ),
      ),
    ];
    expect(named.length).toBeGreaterThan(100);
    const missing = named
      .filter(({ path }) => !placeholder(path) && !existsSync(join(ROOT, path)))
      .map(({ file, path }) => `${relative(ROOT, file)}: ${path}`);
    expect(missing).toEqual([]);
  });
});

describe('docs/BENCHMARKS.md', () => {
  it('holds current results in at most 500 lines', () => {
    expect(readFileSync(join(ROOT, 'docs/BENCHMARKS.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(500);
  });
});
