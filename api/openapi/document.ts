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
import { ERROR_DOCS } from '../schemas/error-docs';
import { contextRequestSchema, outcomeRequestSchema, profilePathSchema, profileUpdateSchema } from '../schemas/request.schemas';
import { ERROR_SCHEMAS, TRACE_ID_PATTERN } from '../schemas/response.schemas';
import { API_DESCRIPTION, TAGS } from './introduction';
import { OPERATIONS, type OperationDoc } from './operations';

const digits = () => z.string().regex(/^\d+$/);

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
function errorHeaders(status: number) {
  if (status === 401) return headers(['X-Request-Id', 'WWW-Authenticate']);
  if (status === 429) return headers(['X-Request-Id', 'Retry-After', ...RATE_LIMIT]);
  if (status === 503) return headers(['X-Request-Id', 'Retry-After'], RATE_LIMIT);
  return headers(['X-Request-Id'], RATE_LIMIT);
}

function errorResponse(status: number, codes: ErrorCode[], responseHeaders = errorHeaders(status)): ZodOpenApiResponseObject {
  const schemas = codes.map((code) => ERROR_SCHEMAS[code]);
  const examples = codes.map((code) => [
    code,
    {
      summary: code,
      value: {
        error: {
          code,
          message: ERROR_DOCS[code].example.message,
          statusCode: status,
          traceId: EXAMPLE_TRACE_ID,
          docUrl: errorDocUrl(code),
          ...(ERROR_DOCS[code].example.details ? { details: ERROR_DOCS[code].example.details } : {}),
        },
      },
    },
  ]);
  return {
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

function responses(route: V1Route, doc: OperationDoc): ZodOpenApiResponsesObject {
  const { success } = doc;
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route, doc)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const entries: Array<[string, ZodOpenApiResponseObject]> = [
    [
      String(success.status),
      {
        description: success.description,
        headers: headers(['X-Request-Id'], RATE_LIMIT),
        ...(success.schema ? { content: { 'application/json': { schema: success.schema, example: success.example } } } : {}),
      },
    ],
    ...[...byStatus].map(([status, codes]): [string, ZodOpenApiResponseObject] => [String(status), errorResponse(status, codes)]),
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
    },
    ...(doc.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: doc.body.schema, example: doc.body.example } } } }
      : {}),
    responses: responses(route, doc),
  };
}

/** Express's `/v1/profile/:userId` is OpenAPI's `/v1/profile/{userId}`. */
export const openApiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, '{$1}');

export type OpenApiDocument = ReturnType<typeof createDocument>;

/** The OpenAPI document, generated from the schemas the API validates with and the route table. */
export function buildOpenApiDocument(): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of V1_ROUTES) paths[openApiPath(route.path)] = { ...paths[openApiPath(route.path)], [route.method]: operation(route) };
  return createDocument({
    openapi: '3.1.0',
    info: { title: 'Context and Outcome Service', version: '1.0.0', description: API_DESCRIPTION },
    tags: TAGS,
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'cos_sk_<test|live>_<id>',
          description: 'An API key; each operation names the scope it needs.',
        },
      },
      schemas: { ContextRequest: contextRequestSchema, OutcomeRequest: outcomeRequestSchema, ProfileUpdate: profileUpdateSchema },
      responses: {
        RouteNotFound: errorResponse(404, ['NOT_FOUND'], headers(['X-Request-Id'])),
        MethodNotAllowed: errorResponse(405, ['METHOD_NOT_ALLOWED'], headers(['X-Request-Id', 'Allow'])),
        // Answered by the HTTP server before any route (shared/http/client-errors.ts), on any path.
        RequestTimeout: errorResponse(408, ['REQUEST_TIMEOUT'], headers(['X-Request-Id'])),
        HeadersTooLarge: errorResponse(431, ['HEADERS_TOO_LARGE'], headers(['X-Request-Id'])),
      },
    },
  });
}
