import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { apiReference } from '../../api/openapi/reference';

/** The API's own OpenAPI document, as GET /v1/openapi.json serves it. */
export const document = JSON.parse(apiReference().json) as Record<string, any>;

const DOCUMENT_ID = 'openapi.json';
// Not strict: the document is an OpenAPI object (paths, info…) holding JSON Schemas, not a schema itself.
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema(document, DOCUMENT_ID);

const escape = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (...parts: string[]) => `/${parts.map(escape).join('/')}`;
const at = (path: string): any =>
  path
    .split('/')
    .slice(1)
    .reduce((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
/** A `$ref` is followed to its target's pointer. */
const follow = (path: string): string => (typeof at(path)?.$ref === 'string' ? follow(at(path).$ref.slice(1)) : path);

function validate(schemaPointer: string, value: unknown): string[] {
  const check = ajv.getSchema(`${DOCUMENT_ID}#${schemaPointer}`)!;
  return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Every header name the document knows: one of them on a response that does not list it is undocumented. */
const KNOWN_HEADERS = new Set(Object.keys(document.components.headers).map((name) => name.replace(/-Optional$/, '').toLowerCase()));

/** The document's path template matching a request path (`/v1/profile/a%20b` → `/v1/profile/{userId}`). */
function pathTemplate(path: string): string | undefined {
  return Object.keys(document.paths).find((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
}

/** Where the document describes this response: the operation's, or the one for unknown paths and methods. */
function responsePointer(method: string, path: string, status: number): string | string[] {
  const template = pathTemplate(path);
  if (!template) return status === 404 ? pointer('components', 'responses', 'RouteNotFound') : [`${method} ${path}: no such path`];
  const operation = document.paths[template][method];
  if (!operation)
    return status === 405 ? pointer('components', 'responses', 'MethodNotAllowed') : [`${method} ${template}: no such operation`];
  if (!operation.responses[status]) return [`${method} ${template}: status ${status} is not documented`];
  return follow(pointer('paths', template, method, 'responses', String(status)));
}

/** The ways a response differs from the document: status, body and headers. */
export function openApiMismatches(response: Response): string[] {
  const method = response.request.method.toLowerCase();
  const path = new URL(response.request.url).pathname;
  const where = responsePointer(method, path, response.status);
  if (Array.isArray(where)) return where;
  const documented = at(where);
  const problems: string[] = [];
  if (documented.content?.['application/json']) {
    if (!/^application\/json/.test(response.get('content-type') ?? '')) problems.push(`content-type ${response.get('content-type')}`);
    problems.push(...validate(`${where}${pointer('content', 'application/json', 'schema')}`, response.body).map((p) => `body ${p}`));
  } else if (response.text) problems.push(`undocumented body ${response.text}`);
  const listed = new Set<string>();
  for (const name of Object.keys(documented.headers ?? {})) {
    listed.add(name.toLowerCase());
    const header = follow(`${where}${pointer('headers', name)}`);
    const value = response.get(name);
    if (value === undefined) {
      if (at(header).required) problems.push(`header ${name} missing`);
    } else problems.push(...validate(`${header}/schema`, value).map((p) => `header ${name} ${p}`));
  }
  for (const name of Object.keys(response.headers)) {
    if (KNOWN_HEADERS.has(name) && !listed.has(name)) problems.push(`header ${name} is not documented for this response`);
  }
  return problems.map((problem) => `${method.toUpperCase()} ${path} → ${response.status}: ${problem}`);
}

/** Asserts that a supertest response is one the OpenAPI document describes. */
export function expectMatchesOpenApi(response: Response): void {
  expect(openApiMismatches(response)).toEqual([]);
}
