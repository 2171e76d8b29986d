import { STATUS_CODES } from 'node:http';
import type { oas32 } from 'zod-openapi';
import { ERROR_DOCS_PAGE, errorAnchor, type ErrorCode } from '../../shared/errors/app-error';
import type { OpenApiDocument } from './document';
import { escapeHtml, htmlTable, isRef, prose, refName, schemaAnchor, schemaHtml, schemaSummary } from './schema-html';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const paragraphs = (text: string | undefined) =>
  (text ?? '')
    .split(/\n{2,}/)
    .filter(Boolean)
    .map((paragraph) => `<p>${prose(paragraph)}</p>`)
    .join('\n');

const json = (value: unknown) => `<pre><code>${escapeHtml(JSON.stringify(value, null, 2))}</code></pre>`;

const example = (label: string, value: unknown) => `<details><summary>${escapeHtml(label)}</summary>${json(value)}</details>`;

const table = htmlTable;

const operationAnchor = (operation: oas32.OperationObject) => `op-${operation.operationId ?? ''}`;

/** Renders the OpenAPI document as one static, script-free HTML page. */
export function renderDocsPage(document: OpenApiDocument): string {
  const components = document.components ?? {};
  const resolve = <T>(value: T | oas32.ReferenceObject, kind: 'responses' | 'headers' | 'schemas' | 'examples'): T =>
    isRef(value) ? (components[kind]?.[refName(value.$ref)] as T) : value;

  // Webhooks (what the service POSTs to a customer's endpoint) are listed as operations named by their event type.
  const operations = [...Object.entries(document.paths ?? {}), ...Object.entries(document.webhooks ?? {})].flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] ? [{ path, method, operation: item[method] }] : [])),
  );
  const responses = [
    ...operations.flatMap(({ operation }) => Object.values(operation.responses ?? {})),
    ...Object.values(components.responses ?? {}),
  ].map((response: oas32.ResponseObject | oas32.ReferenceObject) => resolve(response, 'responses'));
  const headerDescriptions = new Map(
    responses
      .flatMap((response) => Object.entries(response.headers ?? {}))
      .map(([name, value]) => {
        const header = resolve(value, 'headers');
        return [name, header.description ? prose(header.description) : schemaSummary(header.schema)];
      }),
  );

  function headersHtml(headers: oas32.HeadersObject | undefined): string {
    const listed = Object.entries(headers ?? {}).map(
      ([name, value]) =>
        `<a href="#headers"><code>${escapeHtml(name)}</code></a> (${resolve(value, 'headers').required ? 'always' : 'when applicable'})`,
    );
    return listed.length ? `<p>Headers: ${listed.join(', ')}</p>` : '';
  }

  function bodyHtml(media: oas32.MediaTypeObject): string {
    const schema = media.schema;
    const variants = schema && !isRef(schema) && typeof schema === 'object' ? (schema.anyOf ?? [schema]) : [schema];
    const errorCodes = variants.flatMap((variant) => {
      const component = variant && isRef(variant) ? resolve(variant, 'schemas') : undefined;
      const code = errorEnvelope(component)?.code;
      return code
        ? [`<li><a href="#${errorAnchor(code)}"><code>${code}</code></a>: ${prose(object(component)?.description ?? '')}</li>`]
        : [];
    });
    const shape = errorCodes.length ? `<ul>${errorCodes.join('\n')}</ul>` : `<p>Body: ${schemaSummary(schema)}</p>`;
    const examples = Object.entries(media.examples ?? {}).map(([name, value]) =>
      example(`Example: ${name}`, resolve(value, 'examples').value),
    );
    return [shape, media.example !== undefined ? example('Example', media.example) : '', ...examples].join('\n');
  }

  /** A body that is not JSON (metrics text, this page): its media type, what it is, an example. */
  function otherBodyHtml(type: string, media: oas32.MediaTypeObject): string {
    const schema = object(media.schema);
    const example = typeof media.example === 'string' ? `<pre><code>${escapeHtml(media.example)}</code></pre>` : '';
    return `<p>Body: <code>${escapeHtml(type)}</code>${schema?.description ? `, ${prose(schema.description)}` : ''}</p>${example}`;
  }

  function responseHtml(heading: string, value: oas32.ResponseObject | oas32.ReferenceObject): string {
    const response = resolve(value, 'responses');
    const bodies = Object.entries(response.content ?? {}).flatMap(([type, media]) =>
      isRef(media) ? [] : [type === 'application/json' ? bodyHtml(media) : otherBodyHtml(type, media)],
    );
    return `<section class="response"><h5>${escapeHtml(heading)}</h5>
<p>${prose(response.description ?? '')}</p>${headersHtml(response.headers)}
${bodies.length ? bodies.join('\n') : '<p>No body.</p>'}</section>`;
  }

  function operationHtml({ path, method, operation }: (typeof operations)[number]): string {
    const parameters = (operation.parameters ?? []).flatMap((p) => (isRef(p) ? [] : [p]));
    const body = operation.requestBody && !isRef(operation.requestBody) ? operation.requestBody.content['application/json'] : undefined;
    const bodySchema = body && !isRef(body) ? body.schema : undefined;
    return `<article id="${operationAnchor(operation)}" class="operation">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${prose(operation.summary ?? '')}</p>
${paragraphs(operation.description)}
${
  parameters.length
    ? `<h4>Parameters</h4>${table(
        ['Name', 'In', 'Presence', 'Type', 'Description'],
        parameters.map((p) => [
          `<code>${escapeHtml(p.name)}</code>`,
          p.in,
          p.required ? 'required' : 'optional',
          schemaSummary(p.schema),
          prose(p.description ?? ''),
        ]),
      )}`
    : ''
}
${
  body && !isRef(body)
    ? `<h4>Request body</h4><p><code>application/json</code>${bodySchema && isRef(bodySchema) ? `, ${schemaSummary(bodySchema)}` : ''}</p>
${bodySchema ? schemaHtml(resolve(bodySchema, 'schemas')) : ''}${body.example !== undefined ? example('Example', body.example) : ''}`
    : ''
}
<h4>Responses</h4>
${Object.entries(operation.responses ?? {})
  .map(([status, response]) => responseHtml(`${status} ${STATUS_CODES[Number(status)] ?? ''}`, response))
  .join('\n')}
</article>`;
  }

  const tags = (document.tags ?? []).map(
    (tag) => `<section id="tag-${escapeHtml(tag.name)}"><h2>${escapeHtml(tag.name)}</h2>${paragraphs(tag.description)}
${operations
  .filter(({ operation }) => operation.tags?.includes(tag.name))
  .map(operationHtml)
  .join('\n')}</section>`,
  );
  const anyPath = Object.entries(components.responses ?? {}).map(([name, response]) => responseHtml(name, response));
  const schemas = Object.entries(components.schemas ?? {});
  const errors = schemas.flatMap(([, schema]) => {
    const envelope = errorEnvelope(schema);
    if (!envelope) return [];
    const description = typeof schema === 'object' && !isRef(schema) ? (schema.description ?? '') : '';
    return [
      {
        status: envelope.status,
        row: [`<code id="${errorAnchor(envelope.code)}">${envelope.code}</code>`, prose(description), envelope.details],
      },
    ];
  });
  errors.sort((a, b) => a.status - b.status);
  const withDetails = schemas.map(([, schema]) => object(object(schema)?.properties?.error)).find((error) => error?.properties?.details);
  const scheme = Object.entries(components.securitySchemes ?? {}).map(
    ([name, value]) =>
      `<p><code>${escapeHtml(name)}</code>: ${isRef(value) ? '' : `HTTP ${escapeHtml(value.scheme ?? '')}, <code>${escapeHtml(value.bearerFormat ?? '')}</code>. ${prose(value.description ?? '')}`}</p>`,
  );
  const tagSections = tags.join('\n');

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${escapeHtml(document.info.title)}: API reference</title>
<style>${CSS}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><h1>${escapeHtml(document.info.title)}</h1>
<p>API reference, version ${escapeHtml(document.info.version)}, generated from the <a href="/v1/openapi.json">OpenAPI ${escapeHtml(document.openapi)} document</a>.</p></header>
<nav aria-label="Contents"><h2>Contents</h2><ul>
<li><a href="#introduction">Introduction</a></li>
${operations.map(({ path, method, operation }) => `<li><a href="#${operationAnchor(operation)}"><span class="method ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`).join('\n')}
<li><a href="#any-path">Responses to any path</a></li>
<li><a href="#errors">Error codes</a></li>
<li><a href="#headers">Response headers</a></li>
<li><a href="#schemas">Schemas</a></li>
</ul></nav>
<main id="main">
<section id="introduction"><h2>Introduction</h2>${paragraphs(document.info.description)}<h3>Authentication</h3>${scheme.join('\n')}</section>
${tagSections}
<section id="any-path"><h2>Responses to any path</h2>${anyPath.join('\n')}</section>
<section id="errors"><h2>Error codes</h2><p>Every error body is <code>{"error": {…}}</code>. <code>error</code>: ${prose(withDetails?.description ?? '')}</p>
${withDetails ? envelopeHtml(withDetails) : ''}
${table(
  ['Status', 'Code', 'When', 'Details'],
  errors.map(({ status, row }) => [String(status), ...row]),
)}</section>
<section id="headers"><h2>Response headers</h2>${table(
    ['Header', 'Meaning'],
    [...headerDescriptions].map(([name, description]) => [`<code>${escapeHtml(name)}</code>`, description]),
  )}</section>
<section id="schemas"><h2>Schemas</h2>
${schemas
  .filter(([, schema]) => !errorEnvelope(schema))
  .map(
    ([name, schema]) =>
      `<section id="${schemaAnchor(name)}"><h3>${escapeHtml(name)}</h3>${paragraphs(object(schema)?.description)}${schemaHtml(schema)}</section>`,
  )
  .join('\n')}
</section>
</main>
</body>
</html>
`;
}

type Schema = oas32.SchemaObject | oas32.ReferenceObject | undefined;

/** The envelope's fields, described once from one error's schema (the same for every code); each code's own values are in the table of codes. */
function envelopeHtml(error: oas32.SchemaObjectValue): string {
  const field = (name: string, presence: string, type: string) => [
    `<code>${name}</code>`,
    presence,
    type,
    prose(object(error.properties?.[name])?.description ?? ''),
  ];
  return table(
    ['Field', 'Presence', 'Type', 'Description'],
    [
      field('code', 'required', 'string: a code below'),
      field('message', 'required', 'string'),
      field('statusCode', 'required', "integer: the code's status"),
      field('traceId', 'required', schemaSummary(error.properties?.traceId)),
      field('docUrl', 'required', `string: <code>${ERROR_DOCS_PAGE}#error-…</code>`),
      field('details', 'per code', 'object: the Details column below'),
    ],
  );
}
const object = (schema: Schema): oas32.SchemaObjectValue | undefined =>
  schema && typeof schema === 'object' && !isRef(schema) ? schema : undefined;

/** For an error-envelope schema: its code, status and `details` as `field: type` pairs ("—" for none). */
function errorEnvelope(schema: Schema): { code: ErrorCode; status: number; details: string } | undefined {
  const error = object(object(schema)?.properties?.error);
  const code = object(error?.properties?.code)?.const;
  if (!error || typeof code !== 'string') return undefined;
  const details = object(error.properties?.details);
  const fields = Object.entries(details?.properties ?? {}).map(([name, field]) => {
    const description = object(field)?.description;
    return `<code>${escapeHtml(name)}</code>: ${schemaSummary(field)}${description ? ` (${prose(description)})` : ''}`;
  });
  const sometimes = error.required?.includes('details') ? '' : 'Sometimes: ';
  return {
    code: code as ErrorCode,
    status: Number(object(error.properties?.statusCode)?.const),
    details: details ? `${sometimes}${fields.join('; ')}` : '—',
  };
}

const CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #fff; --line: #d0d7de; --code: #f3f4f6; --accent: #0550ae; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --line: #30363d; --code: #161b22; --accent: #6cb6ff; } }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 70rem; padding: 1rem 1.5rem 4rem; }
a { color: var(--accent); } a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: .25rem; margin-top: 3rem; }
h3 { margin-top: 2rem; } h5 { font-size: 1rem; margin: 1.25rem 0 .25rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
code { background: var(--code); padding: .1em .3em; border-radius: 4px; overflow-wrap: break-word; }
pre { background: var(--code); padding: .75rem; overflow-x: auto; border-radius: 6px; } pre code { padding: 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; } th, td { border: 1px solid var(--line); padding: .35rem .5rem; text-align: left; vertical-align: top; }
.method { display: inline-block; min-width: 4.5em; font: bold .8em ui-monospace, monospace; text-align: center; border-radius: 4px; padding: .1em .4em; color: #fff; background: #57606a; }
.method.get { background: #1a7f37; } .method.post { background: #0550ae; } .method.put { background: #9a6700; } .method.delete { background: #cf222e; }
.operation { border-top: 2px solid var(--line); margin-top: 2.5rem; } .summary { font-size: 1.1rem; }
.response { border-left: 3px solid var(--line); padding-left: .75rem; } .note { color: var(--muted); font-size: .9em; }
nav ul { list-style: none; padding-left: 0; columns: 2 18rem; } nav li { margin: .2rem 0; }
pre, table { max-width: 100%; } h1, h2, h3 { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  body { padding: .75rem 1rem 3rem; } h1 { font-size: 1.6rem; }
  .response { padding-left: .5rem; }
  table, tbody, tr, td { display: block; } thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  tr { border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0; padding: .35rem .6rem; }
  td { border: 0; padding: .1rem 0; } td::before { content: attr(data-label) ": "; font-weight: 600; color: var(--muted); }
}
`;
