import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * What the SDK's package promises its users beyond its behaviour: the README's TypeScript
 * examples compile, as its users would compile them (strict, exactOptionalPropertyTypes), and
 * its source maps work without the sources, which the package does not ship.
 */
const SDK = path.join(__dirname, '../../sdk');

interface Example {
  /** Line in the README of the block's first line. */
  line: number;
  code: string;
}

/** The ```ts blocks of the README. */
function examples(markdown: string): Example[] {
  const found: Example[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    found.push({ line: i + 2, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return found;
}

/**
 * An example as a module: its imports at the top, the rest inside an async function (the package
 * is CommonJS, where top-level await does not compile). Names the examples take as given — a
 * client `cos` and a context call's `requestId` — are declared outside it; an example that
 * declares them itself shadows them. Each line remembers its README line for the messages.
 */
function asModule(example: Example): { text: string; readmeLines: number[] } {
  const imports: Array<[string, number]> = [];
  const body: Array<[string, number]> = [];
  const lines = example.code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('import ')) {
      body.push([`  ${lines[i]}`, example.line + i]);
      continue;
    }
    for (;;) {
      imports.push([lines[i]!, example.line + i]);
      if (/from '[^']+';\s*$/.test(lines[i]!)) break;
      i++;
    }
  }
  const given: Array<[string, number]> = [
    ["import type { CosClient as GivenClient } from '@cos/sdk';", 0],
    ['declare const cos: GivenClient;', 0],
    ['declare const requestId: string;', 0],
  ];
  const all = [...imports, ...given, ['export async function example(): Promise<void> {', 0], ...body, ['}', 0]] as Array<[string, number]>;
  return { text: all.map(([text]) => text).join('\n'), readmeLines: all.map(([, line]) => line) };
}

function sdkCompilerOptions(): ts.CompilerOptions {
  const configPath = path.join(SDK, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (file) => ts.sys.readFile(file));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, SDK, undefined, configPath).options;
}

describe('the SDK package', () => {
  it("README's TypeScript examples compile with the SDK's settings, exactOptionalPropertyTypes included", () => {
    const readme = readFileSync(path.join(SDK, 'README.md'), 'utf8');
    const blocks = examples(readme);
    expect(blocks.length).toBeGreaterThanOrEqual(3);

    const options: ts.CompilerOptions = {
      ...sdkCompilerOptions(),
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      rootDir: undefined, // the examples live beside src/, not in it
      // The webhook receiver's `import express from 'express'`, as apps (and `tsc --init`) set it.
      esModuleInterop: true,
      // The examples import the package by its name; here it is its sources.
      paths: { '@cos/sdk': [path.join(SDK, 'src/index.ts')] },
    };
    const files = new Map(blocks.map((block, i) => [path.join(SDK, `readme-example-${i + 1}.ts`), asModule(block)]));
    const host = ts.createCompilerHost(options);
    const { getSourceFile, fileExists, readFile } = host;
    host.fileExists = (file) => files.has(file) || fileExists.call(host, file);
    host.readFile = (file) => files.get(file)?.text ?? readFile.call(host, file);
    host.getSourceFile = (file, language, ...rest) => {
      const example = files.get(file);
      return example ? ts.createSourceFile(file, example.text, language) : getSourceFile.call(host, file, language, ...rest);
    };
    const program = ts.createProgram([...files.keys()], options, host);

    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      const example = diagnostic.file && files.get(diagnostic.file.fileName);
      if (!diagnostic.file || diagnostic.start === undefined) return message;
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return example ? `README.md line ${example.readmeLines[line]}: ${message}` : `${diagnostic.file.fileName}:${line + 1}: ${message}`;
    });
    expect(problems).toEqual([]);
  }, 60_000);

  it('ships source maps that carry their sources (the package has no src/), and no declaration maps pointing there', () => {
    const options = sdkCompilerOptions();
    const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { files: string[] };
    expect(manifest.files).toEqual(['dist']);
    if (options.sourceMap) expect(options.inlineSources).toBe(true);
    expect(options.declarationMap ?? false).toBe(false);
  });
});
