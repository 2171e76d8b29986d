import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { ERROR_STATUS, errorDocUrl, type ErrorCode } from '../../shared/errors/app-error';
import { V1_ROUTES, type V1Route } from '../routes/v1.routes';
import { ERROR_DOCS, type ErrorDoc } from '../schemas/error-docs';
import { IDEMPOTENCY_KEY_PATTERN, profilePathSchema } from '../schemas/request.schemas';
import { ERROR_SCHEMAS, TRACE_ID_PATTERN } from '../schemas/response.schemas';
import { API_DESCRIPTION, TAGS } from './introduction';
import { OPERATIONS, type OperationDoc } from './operations';
import { webhookOperations } from './webhooks';

const digits = () => z.string().regex(/^\d+$/);

/**
 * `/` is the deployment that served the document, whatever its public URL (OpenAPI resolves a
 * relative server URL against the document's own address), so no deployment configures it.
 */
const SERVERS = [{ url: '/', description: 'The deployment serving this document (http://localhost:3000 under npm start)' }];

/** The X-Request-Id (and traceId) of the examples: a generated one. */
const EXAMPLE_TRACE_ID = '5b0e7c1e-2f7d-4a43-9a0e-1f7b3c0a9d52';

/** Response headers, each a component; the rate-limit ones are optional (live keys only) but on a 429. */
const HEADERS = {
  'X-Request-Id': z
    .string()
    .regex(TRACE_ID_PATTERN)
    .meta({ description: "The client's X-Request-Id when it is 1–128 of [A-Za-z0-9._-], else a generated UUID." }),
  'X-RateLimit-Limit': digits().meta({ description: 'Live keys: the per-second limit (the monthly quota on a monthly refusal).' }),
  'X-RateLimit-Remaining': digits().meta({ description: 'Live keys: requests left in the current one-second window.' }),
  'X-RateLimit-Reset': digits().meta({ description: 'Live keys: Unix epoch seconds when the window ends.' }),
  'Retry-After': digits().meta({ description: 'Seconds to wait before retrying.' }),
  'WWW-Authenticate': z.literal('Bearer realm="cos"').meta({ description: 'On every 401: `Bearer realm="cos"`.' }),
  Allow: z.string().meta({ description: 'The methods this path serves.' }),
  'Idempotent-Replayed': z.literal('true').meta({
    description: 'On a POST with an Idempotency-Key: `true` when this is the first response to that key and request, replayed.',
  }),
};
type HeaderName = keyof typeof HEADERS;
const RATE_LIMIT = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;
/** Each header as a component: `X-RateLimit-Limit` (required) and `X-RateLimit-Limit-Optional`. */
const HEADER_COMPONENTS = new Map<HeaderName, { required: z.ZodType; optional: z.ZodType }>(
  (Object.keys(HEADERS) as HeaderName[]).map((name) => {
    const schema = HEADERS[name];
    const optional = schema.optional().meta({ description: schema.description, header: { id: `${name}-Optional` } });
    return [name, { required: schema.meta({ header: { id: name } }), optional }];
  }),
);

function headers(required: readonly HeaderName[], optional: readonly HeaderName[] = []) {
  return z.object({
    ...Object.fromEntries(required.map((name) => [name, HEADER_COMPONENTS.get(name)!.required])),
    ...Object.fromEntries(optional.map((name) => [name, HEADER_COMPONENTS.get(name)!.optional])),
  });
}

/** Rate-limit headers come with every response to an identified live key; a 401 has none. */
function errorHeaders(status: number, codes: readonly ErrorCode[]) {
  if (status === 401) return headers(['X-Request-Id', 'WWW-Authenticate']);
  if (status === 429) return headers(['X-Request-Id', 'Retry-After', ...RATE_LIMIT]);
  if (status === 503) return headers(['X-Request-Id', 'Retry-After'], RATE_LIMIT);
  // A 409 IDEMPOTENCY_KEY_IN_USE says when to retry; the other 409s do not.
  if (codes.includes('IDEMPOTENCY_KEY_IN_USE')) return headers(['X-Request-Id'], [...RATE_LIMIT, 'Retry-After']);
  return headers(['X-Request-Id'], RATE_LIMIT);
}

/** An error body as the API sends it, for the examples. */
const errorExample = (code: ErrorCode, example: ErrorDoc['example'] = ERROR_DOCS[code].example) => ({
  error: {
    code,
    message: example.message,
    statusCode: ERROR_STATUS[code],
    traceId: EXAMPLE_TRACE_ID,
    docUrl: errorDocUrl(code),
    ...(example.details ? { details: example.details } : {}),
  },
});

function errorResponse(
  status: number,
  codes: ErrorCode[],
  responseHeaders = errorHeaders(status, codes),
  options: { id?: string; example?: ErrorDoc['example'] } = {},
): ZodOpenApiResponseObject {
  const schemas = codes.map((code) => ERROR_SCHEMAS[code]);
  const examples = codes.map((code) => [code, { summary: code, value: errorExample(code, options.example) }]);
  return {
    ...(options.id ? { id: options.id } : {}),
    description: codes.join(', '),
    headers: responseHeaders,
    content: {
      'application/json': { schema: schemas.length === 1 ? schemas[0] : z.union(schemas), examples: Object.fromEntries(examples) },
    },
  };
}

const GUARD_CODES: ErrorCode[] = [
  'UNAUTHORIZED',
  'FORBIDDEN',
  'ACCOUNT_RESTRICTED',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
];
const BODY_CODES: ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'INVALID_JSON'];

/** Every code a route can answer with: its guards', its body's, its path's and its own. */
function routeErrorCodes(route: V1Route, doc: OperationDoc): ErrorCode[] {
  const codes = new Set<ErrorCode>([...GUARD_CODES, ...doc.errors]);
  if (route.method === 'post' || route.method === 'put') BODY_CODES.forEach((code) => codes.add(code));
  if (route.path.includes(':userId')) codes.add('INVALID_USER_ID');
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => codes.has(code));
}

/**
 * What the HTTP server answers before any route, whatever the path (shared/http/client-errors.ts):
 * each operation lists the two a well-formed request can meet, as references.
 */
const REQUEST_TIMEOUT = errorResponse(408, ['REQUEST_TIMEOUT'], headers(['X-Request-Id']), { id: 'RequestTimeout' });
const HEADERS_TOO_LARGE = errorResponse(431, ['HEADERS_TOO_LARGE'], headers(['X-Request-Id']), { id: 'HeadersTooLarge' });
const SERVER_REFUSALS = { '408': REQUEST_TIMEOUT, '431': HEADERS_TOO_LARGE };

/** The POSTs: they take an Idempotency-Key, and a replayed success says so. */
const isPost = (route: V1Route) => route.method === 'post';

const idempotencyKeyHeader = z.object({
  'Idempotency-Key': z.string().regex(IDEMPOTENCY_KEY_PATTERN).optional().meta({
    description:
      'Makes a retry safe: 1–255 visible ASCII characters, no spaces, e.g. a UUID, the same for every retry of one call. Within the idempotency window (IDEMPOTENCY_WINDOW, 1 hour by default) the same key with the same request replays the first success, with Idempotent-Replayed: true; with another request it is a 409 IDEMPOTENCY_KEY_REUSED; while the first is still running, a 409 IDEMPOTENCY_KEY_IN_USE with Retry-After: 1. Errors are not replayed: a failed request frees its key. Malformed: 400 VALIDATION_ERROR.',
  }),
});

function responses(route: V1Route, doc: OperationDoc): ZodOpenApiResponsesObject {
  const { success } = doc;
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route, doc)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const entries: Array<[string, ZodOpenApiResponseObject]> = [
    [
      String(success.status),
      {
        description: success.description,
        headers: headers(['X-Request-Id'], isPost(route) ? [...RATE_LIMIT, 'Idempotent-Replayed'] : RATE_LIMIT),
        ...(success.status === 204 ? {} : { content: { 'application/json': { schema: success.schema, example: success.example } } }),
      },
    ],
    ...[...byStatus].map(([status, codes]): [string, ZodOpenApiResponseObject] => [String(status), errorResponse(status, codes)]),
    ...Object.entries(SERVER_REFUSALS),
  ];
  return Object.fromEntries(entries) as ZodOpenApiResponsesObject;
}

function operation(route: V1Route): ZodOpenApiOperationObject {
  const doc = OPERATIONS[route.name];
  return {
    operationId: route.name.replace(/\.(\w)/g, (_, letter: string) => letter.toUpperCase()),
    summary: doc.summary,
    description: `${doc.description}\n\nScope: \`${route.scope}\`.`,
    tags: [doc.tag],
    'x-scope': route.scope,
    requestParams: {
      ...(route.path.includes(':userId') ? { path: profilePathSchema } : {}),
      ...(doc.query ? { query: doc.query } : {}),
      ...(isPost(route) ? { header: idempotencyKeyHeader } : {}),
    },
    ...(doc.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: doc.body.schema, example: doc.body.example } } } }
      : {}),
    responses: responses(route, doc),
  };
}

const healthSchema = z
  .object({ status: z.literal('ok').meta({ description: 'Always ok: the process answers.' }) })
  .meta({ id: 'Health', description: 'The process is alive.' });

/** What /readyz reports (shared/health/readiness.ts). */
const readinessSchema = z
  .object({
    status: z.enum(['ok', 'degraded']).meta({ description: 'ok when every dependency is ok, else degraded.' }),
    checks: z
      .object({
        redis: z.enum(['ok', 'unavailable']).meta({ description: 'ok: Redis answered PING in time; unavailable: it did not.' }),
        postgres: z.enum(['ok', 'unavailable', 'read-only']).meta({
          description: 'ok: Postgres accepts writes; read-only: it answers but refuses writes (a standby); unavailable: no answer in time.',
        }),
      })
      .meta({ description: 'Each dependency with its state.' }),
  })
  .meta({ id: 'Readiness', description: "Whether this process can serve: its dependencies' states." });

/** An operation that needs no API key: the probes, metrics and this reference. */
function keyless(
  operationId: string,
  tag: 'Operations' | 'Reference',
  summary: string,
  description: string,
  responses: ZodOpenApiResponsesObject,
): ZodOpenApiOperationObject {
  return { operationId, summary, description, tags: [tag], security: [], responses: { ...responses, ...SERVER_REFUSALS } };
}

const body = (mediaType: string, schema: z.ZodType, example: unknown) => ({ [mediaType]: { schema, example } });

/** The probes and metrics (api/routes/ops.routes.ts) and this document and its page (api/app.ts). */
function keylessPaths(): ZodOpenApiPathsObject {
  const answered = (description: string, content?: ReturnType<typeof body>): ZodOpenApiResponseObject => ({
    description,
    headers: headers(['X-Request-Id']),
    ...(content ? { content } : {}),
  });
  const metrics = keyless(
    'metrics',
    'Operations',
    'Prometheus metrics of the API',
    "This host's API processes' metrics in Prometheus text exposition format 0.0.4 (docs/OPERATIONS.md lists them). Open unless the deployment sets ADMIN_TOKEN; then it needs `Authorization: Bearer <ADMIN_TOKEN>` (API keys are not accepted).",
    {
      '200': answered(
        'The metrics, as `text/plain; version=0.0.4; charset=utf-8`',
        body(
          'text/plain',
          z.string().meta({ description: 'Prometheus text exposition format, version 0.0.4.' }),
          '# HELP cos_http_requests_total HTTP requests answered\n# TYPE cos_http_requests_total counter\ncos_http_requests_total{route="context",status_class="2xx"} 1027\n',
        ),
      ),
      '401': errorResponse(401, ['UNAUTHORIZED'], undefined, {
        example: { message: 'Metrics require the admin token: send Authorization: Bearer <ADMIN_TOKEN>' },
      }),
      '500': errorResponse(500, ['INTERNAL_ERROR'], headers(['X-Request-Id'])),
      '503': errorResponse(503, ['SERVICE_UNAVAILABLE'], headers(['X-Request-Id', 'Retry-After']), {
        example: { message: 'The other API processes did not report their metrics; retry' },
      }),
    },
  );
  return {
    '/healthz': {
      get: keyless(
        'healthz',
        'Operations',
        'Liveness: the process answers',
        'Checks no dependency, so it stays 200 while Redis or Postgres is away (restarting would not help then).',
        { '200': answered('The process is running', body('application/json', healthSchema, { status: 'ok' })) },
      ),
    },
    '/readyz': {
      get: keyless(
        'readyz',
        'Operations',
        'Readiness: Redis and Postgres reachable',
        'Redis answers PING and Postgres accepts writes, each within 2 s (three quarters of REQUEST_DEADLINE when that is shorter), probed in parallel on connections of their own.',
        {
          '200': answered(
            'Ready: every dependency is ok',
            body('application/json', readinessSchema, { status: 'ok', checks: { redis: 'ok', postgres: 'ok' } }),
          ),
          '503': answered(
            'Not ready: at least one dependency is not ok',
            body('application/json', readinessSchema, { status: 'degraded', checks: { redis: 'ok', postgres: 'read-only' } }),
          ),
        },
      ),
    },
    '/metrics': { get: { ...metrics, security: [{}, { adminToken: [] }] } },
    '/v1/openapi.json': {
      get: keyless('openapi', 'Reference', 'This OpenAPI document', 'Generated at start-up from the schemas the API validates with.', {
        '200': answered(
          'The OpenAPI 3.1 document',
          body('application/json', z.record(z.string(), z.unknown()).meta({ description: 'An OpenAPI 3.1 document.' }), {
            openapi: '3.1.0',
          }),
        ),
      }),
    },
    '/docs': {
      get: keyless('docs', 'Reference', 'This document as a web page', 'One static HTML page: no scripts, nothing loaded from elsewhere.', {
        '200': answered(
          'The API reference',
          body('text/html', z.string().meta({ description: 'An HTML page.' }), '<!doctype html><html lang="en">…</html>'),
        ),
      }),
    },
  };
}

/** Express's `/v1/profile/:userId` is OpenAPI's `/v1/profile/{userId}`. */
export const openApiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, '{$1}');

export type OpenApiDocument = ReturnType<typeof createDocument>;

/** The OpenAPI document, generated from the schemas the API validates with and the route table. */
export function buildOpenApiDocument(): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of V1_ROUTES) paths[openApiPath(route.path)] = { ...paths[openApiPath(route.path)], [route.method]: operation(route) };
  Object.assign(paths, keylessPaths());
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Context and Outcome Service',
      version: '1.0.0',
      description: API_DESCRIPTION,
      // As package.json: the service is not licensed for use by others.
      license: { name: 'UNLICENSED' },
    },
    servers: SERVERS,
    tags: TAGS,
    security: [{ bearerAuth: [] }],
    paths,
    webhooks: webhookOperations(),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'cos_sk_<test|live>_<id>',
          description: 'An API key; each operation names the scope it needs.',
        },
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: "The deployment's ADMIN_TOKEN, which GET /metrics needs when it is set.",
        },
      },
      // The answers that belong to no operation: to unknown paths, other methods and OPTIONS, and
      // what the HTTP server refuses before it knows the path (shared/http/client-errors.ts).
      responses: {
        RouteNotFound: errorResponse(404, ['NOT_FOUND'], headers(['X-Request-Id'])),
        MethodNotAllowed: errorResponse(405, ['METHOD_NOT_ALLOWED'], headers(['X-Request-Id', 'Allow'])),
        AllowedMethods: {
          description: 'OPTIONS on a known path: the methods it serves, in Allow. No body, no key needed.',
          headers: headers(['X-Request-Id', 'Allow']),
        },
        MalformedRequest: errorResponse(400, ['VALIDATION_ERROR'], headers(['X-Request-Id']), {
          example: {
            message: 'Invalid request: it is not a well-formed HTTP/1.1 request',
            details: { fields: [{ field: '(request)', message: 'must be a well-formed HTTP/1.1 request' }] },
          },
        }),
        ChunkExtensionsTooLarge: errorResponse(413, ['PAYLOAD_TOO_LARGE'], headers(['X-Request-Id']), {
          example: { message: 'Chunk extensions of the body exceed 16384 bytes', details: { limit: 16384 } },
        }),
      },
    },
  });
}
