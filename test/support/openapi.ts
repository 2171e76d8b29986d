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

/** One request and its response, however the test made it (supertest, fetch, node:http). */
export interface Exchange {
  method: string;
  /** The path as the server saw it, without the query: matched against the document's paths. */
  path: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The body as received; empty for none. */
  text: string;
}

/**
 * The path of a URL as a client sends it. The WHATWG parser of `fetch` and node:http removes
 * `.` and `..` segments before sending, so the server sees its pathname.
 */
export const sentPath = (url: string): string => new URL(url).pathname;

/** A supertest response as an exchange (its text is undefined for HEAD, as for a body it does not buffer as text). */
export const supertestExchange = (response: Response): Exchange => ({
  method: response.request.method,
  // supertest sends the path as the test wrote it, `..` and all: the server routes that.
  path: response.request.url.replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/[?#].*$/s, ''),
  status: response.status,
  headers: response.headers as Exchange['headers'],
  text: typeof response.text === 'string' ? response.text : '',
});

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

const anyPath = (name: string) => pointer('components', 'responses', name);

/**
 * Where the document describes this response: the operation's (HEAD: GET's), or one of the
 * responses to any path (unknown paths and methods, OPTIONS).
 */
function responsePointer(method: string, path: string, status: number): string | string[] {
  const template = pathTemplate(path);
  if (!template) return status === 404 ? anyPath('RouteNotFound') : [`${method} ${path}: no such path`];
  if (method === 'options') return status === 204 ? anyPath('AllowedMethods') : [`OPTIONS ${template}: status ${status}`];
  const operation = document.paths[template][method === 'head' ? 'get' : method];
  if (!operation) return status === 405 ? anyPath('MethodNotAllowed') : [`${method} ${template}: no such operation`];
  if (!operation.responses[status]) return [`${method} ${template}: status ${status} is not documented`];
  return follow(pointer('paths', template, method === 'head' ? 'get' : method, 'responses', String(status)));
}

const headerValue = (exchange: Exchange, name: string): string | undefined => {
  const value = exchange.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The ways a response differs from the document: status, body and headers. */
export function openApiMismatches(response: Response | Exchange): string[] {
  const exchange = 'request' in response ? supertestExchange(response) : response;
  const method = exchange.method.toLowerCase();
  const { path } = exchange;
  const where = responsePointer(method, path, exchange.status);
  const problems = Array.isArray(where) ? where : bodyAndHeaderMismatches(exchange, method, where);
  return problems.map((problem) => `${method.toUpperCase()} ${path} → ${exchange.status}: ${problem}`);
}

function bodyAndHeaderMismatches(exchange: Exchange, method: string, where: string): string[] {
  const documented = at(where);
  const problems: string[] = [];
  const contentType = headerValue(exchange, 'content-type') ?? '';
  const types = Object.keys(documented.content ?? {});
  if (method === 'head' || types.length === 0) {
    if (exchange.text) problems.push(`undocumented body ${exchange.text.slice(0, 200)}`);
  } else if (!types.some((type) => contentType.startsWith(type))) {
    problems.push(`content-type ${contentType}, documented: ${types.join(', ')}`);
  } else if (contentType.startsWith('application/json')) {
    let body: unknown;
    try {
      body = JSON.parse(exchange.text);
    } catch {
      return [...problems, `body is not JSON: ${exchange.text.slice(0, 200)}`];
    }
    problems.push(...validate(`${where}${pointer('content', 'application/json', 'schema')}`, body).map((p) => `body ${p}`));
    // An error names the exchange it answers: its traceId is the X-Request-Id header.
    const traceId = (body as { error?: { traceId?: unknown } } | null)?.error?.traceId;
    if (traceId !== undefined && traceId !== headerValue(exchange, 'x-request-id')) {
      problems.push(`error.traceId ${String(traceId)} is not the X-Request-Id ${headerValue(exchange, 'x-request-id')}`);
    }
  }
  const listed = new Set<string>();
  for (const name of Object.keys(documented.headers ?? {})) {
    listed.add(name.toLowerCase());
    const header = follow(`${where}${pointer('headers', name)}`);
    const value = headerValue(exchange, name);
    if (value === undefined) {
      if (at(header).required) problems.push(`header ${name} missing`);
    } else problems.push(...validate(`${header}/schema`, value).map((p) => `header ${name} ${p}`));
  }
  for (const name of Object.keys(exchange.headers)) {
    if (KNOWN_HEADERS.has(name.toLowerCase()) && !listed.has(name.toLowerCase()))
      problems.push(`header ${name} is not documented for this response`);
  }
  return problems;
}

/** Asserts that a supertest response is one the OpenAPI document describes. */
export function expectMatchesOpenApi(response: Response): void {
  expect(openApiMismatches(response)).toEqual([]);
}
