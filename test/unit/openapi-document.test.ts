import { execFileSync } from 'node:child_process';
import { openApiPath } from '../../api/openapi/document';
import { V1_ROUTES } from '../../api/routes/v1.routes';
import { contextRequestSchema, outcomeRequestSchema, profileUpdateSchema, versionsQuerySchema } from '../../api/schemas/request.schemas';
import { prose } from '../../api/openapi/schema-html';
import { apiReference } from '../../api/openapi/reference';
import { ERROR_STATUS, errorAnchor, errorDocUrl, type ErrorCode } from '../../shared/errors/app-error';
import { document } from '../support/openapi';

const CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

interface DocumentedError {
  where: string;
  status: string;
  code: string;
  statusCode: number;
}

/** A response object, its reference followed. */
const resolved = (response: any): any => (response.$ref ? document.components.responses[response.$ref.split('/').pop()] : response);

/** The error envelopes a response object's body can be: their code and statusCode. */
function errorVariants(response: any): Array<{ code: string; statusCode: number }> {
  const schema = resolved(response).content?.['application/json']?.schema;
  if (!schema) return [];
  return (schema.anyOf ?? [schema]).flatMap((variant: { $ref?: string }) => {
    const error = variant.$ref && document.components.schemas[variant.$ref.split('/').pop()!].properties.error;
    return error ? [{ code: error.properties.code.const, statusCode: error.properties.statusCode.const }] : [];
  });
}

/** Every error the document lists: in operations (under their status) and in the responses to any path. */
function documentedErrors(): DocumentedError[] {
  const inOperations = Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).flatMap(([method, operation]: [string, any]) =>
      Object.entries(operation.responses).map(([status, response]) => ({ where: `${method} ${path}`, status, response })),
    ),
  );
  const anyPath = Object.entries(document.components.responses).map(([name, response]) => ({ where: name, status: '', response }));
  return [...inOperations, ...anyPath].flatMap(({ where, status, response }) =>
    errorVariants(response).map((variant) => ({ where, status: status || String(variant.statusCode), ...variant })),
  );
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    // The validator is ESM-only; jest runs CommonJS, so it runs in a child node process.
    const script = `import { Validator } from '@seriousme/openapi-schema-validator';
      let input = ''; for await (const chunk of process.stdin) input += chunk;
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(input));
      process.stdout.write(JSON.stringify({ ...result, version: validator.version }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      input: JSON.stringify(document),
      cwd: process.cwd(),
    });
    expect(JSON.parse(output.toString())).toEqual({ valid: true, version: '3.1' });
  });

  it.each(V1_ROUTES.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
    'documents %s with its path parameters, bearer security and its guards’ error codes',
    (_label, route) => {
      const operation = document.paths[openApiPath(route.path)]?.[route.method];
      expect(operation).toBeDefined();
      const pathParams = operation.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name);
      expect(pathParams).toEqual([...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]));
      expect(operation.security ?? document.security).toEqual([{ bearerAuth: [] }]);
      expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });

      const codes = Object.values(operation.responses).flatMap((response) => errorVariants(response).map((variant) => variant.code));
      const expected: ErrorCode[] = [
        'UNAUTHORIZED',
        'FORBIDDEN',
        'ACCOUNT_RESTRICTED',
        'RATE_LIMIT_EXCEEDED',
        'INTERNAL_ERROR',
        'SERVICE_UNAVAILABLE',
      ];
      if (route.method === 'post' || route.method === 'put') expected.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'INVALID_JSON');
      if (route.path.includes(':userId')) expected.push('INVALID_USER_ID');
      expect(codes).toEqual(expect.arrayContaining(expected));
      expect(Object.keys(operation.responses).filter((status) => /^2/.test(status))).toHaveLength(1);
    },
  );

  it.each(CODES.map((code) => [code, ERROR_STATUS[code]] as const))('documents error code %s, always under status %d', (code, status) => {
    const listed = documentedErrors().filter((error) => error.code === code);
    expect(listed.length).toBeGreaterThan(0);
    for (const error of listed) expect({ ...error, status: Number(error.status) }).toEqual({ ...error, status, statusCode: status });
  });

  it('documents X-Request-Id on every response, Retry-After on 429 and 503 errors, and rate-limit headers on 429', () => {
    const operations = Object.values(document.paths).flatMap((item: any) => Object.values(item));
    const responses = operations.flatMap((op: any) => Object.entries(op.responses)) as Array<[string, any]>;
    for (const [status, response] of [...responses, ...Object.entries(document.components.responses)] as Array<[string, any]>) {
      const headers = Object.keys(resolved(response).headers ?? {});
      expect({ status, headers }).toEqual({ status, headers: expect.arrayContaining(['X-Request-Id']) });
      if (status === '429')
        expect(headers).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
      // A 503 SERVICE_UNAVAILABLE; /readyz's 503 is its report, not an error.
      if (status === '503' && errorVariants(response).length > 0) expect(headers).toContain('Retry-After');
    }
  });

  it.each(CODES)('gives %s an anchor on /docs, the one its docUrl names', (code) => {
    const anchor = errorDocUrl(code).slice(errorDocUrl(code).indexOf('#') + 1);
    expect(anchor).toBe(errorAnchor(code));
    expect(apiReference().html).toContain(`<code id="${anchor}">${code}</code>`);
  });

  it('documents the query parameters of the versions route from the schema it validates them with', () => {
    const parameters = document.paths['/v1/profile/{userId}/versions'].get.parameters;
    const query = parameters.filter((p: { in: string }) => p.in === 'query');
    expect(query.map((p: { name: string }) => p.name)).toEqual(Object.keys(versionsQuerySchema.shape));
    expect(query.find((p: { name: string }) => p.name === 'limit').description).toMatch(/1 to 100/);
  });
});

/** A schema component by its `$ref`. */
const component = (ref: string): any => document.components.schemas[ref.split('/').pop()!];

/** The properties under `schema` (at any depth) that have no description, named by their path. */
function undescribed(schema: any, where: string): string[] {
  if (!schema || typeof schema !== 'object' || schema.$ref) return [];
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, child]: [string, any]) => {
    const described = child.description || (child.$ref && component(child.$ref).description);
    return [...(described ? [] : [`${where}.${name}`]), ...undescribed(child, `${where}.${name}`)];
  });
  const nested = [schema.items, schema.additionalProperties, ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  return [...own, ...nested.flatMap((child) => undescribed(child, `${where}[]`))];
}

/** Every operation of the document with its path and method. */
const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, operation]: [string, any]) => ({ where: `${method.toUpperCase()} ${path}`, operation })),
  );

/** Every schema given inline in an operation: request and response bodies. */
const inlineSchemas = () =>
  operations().flatMap(({ where, operation }) => [
    ...Object.entries(operation.requestBody?.content ?? {}).map(([type, media]: [string, any]) => [
      `${where} request ${type}`,
      media.schema,
    ]),
    ...Object.entries(operation.responses).flatMap(([status, response]: [string, any]) =>
      Object.entries(resolved(response).content ?? {}).map(([type, media]: [string, any]) => [`${where} ${status} ${type}`, media.schema]),
    ),
  ]);

describe('the OpenAPI document is complete', () => {
  it('names its server: the deployment serving it, whatever its public URL', () => {
    expect(document.servers).toEqual([{ url: '/', description: expect.stringContaining('http://localhost:3000') }]);
  });

  it('describes every field of every request and response, every parameter and every header', () => {
    const fields = [
      ...Object.entries(document.components.schemas).flatMap(([name, schema]) => undescribed(schema, name)),
      ...inlineSchemas().flatMap(([where, schema]) => undescribed(schema, where)),
    ];
    expect(fields).toEqual([]);
    const parameters = operations().flatMap(({ where, operation }) =>
      (operation.parameters ?? []).filter((p: any) => !p.description).map((p: any) => `${where} ${p.in} ${p.name}`),
    );
    expect(parameters).toEqual([]);
    const headers = Object.entries(document.components.headers).filter(([, header]: [string, any]) => !header.description);
    expect(headers).toEqual([]);
  });

  it('shows on /docs the description of every field of the request and response schemas, and of every parameter', () => {
    const { html } = apiReference();
    const descriptions = (schema: any): string[] =>
      Object.values(schema.properties ?? {}).flatMap((child: any) => [
        ...(child.description ? [child.description] : []),
        ...descriptions(child),
        ...(child.items ? descriptions(child.items) : []),
      ]);
    const shown = Object.entries(document.components.schemas).flatMap(([name, schema]) => descriptions(schema).map((text) => [name, text]));
    const parameters = operations().flatMap(({ where, operation }) => (operation.parameters ?? []).map((p: any) => [where, p.description]));
    const missing = [...shown, ...parameters].filter(([, text]) => !html.includes(prose(text)));
    expect(missing).toEqual([]);
  });

  it.each(['ContextRequest', 'OutcomeRequest', 'ProfileUpdate'])(
    'accepts null for every optional field of %s, as the API does (absent; unpinned for a PUT pin)',
    (name) => {
      const schema = document.components.schemas[name];
      const optional = Object.keys(schema.properties).filter((field) => !schema.required?.includes(field));
      expect(optional.length).toBeGreaterThan(0);
      for (const field of optional) {
        const property = schema.properties[field];
        expect({ field, nullable: (property.anyOf ?? [property]).some((variant: any) => [variant.type].flat().includes('null')) }).toEqual({
          field,
          nullable: true,
        });
      }
      // The API agrees: each of them null is accepted (with what the body needs besides).
      const base: Record<string, Record<string, unknown>> = {
        ContextRequest: { userId: 'u', task: 't' },
        OutcomeRequest: { requestId: `req_${'A'.repeat(60)}`, started: true },
        ProfileUpdate: { preferredFraming: 'purpose' },
      };
      const zodSchema = { ContextRequest: contextRequestSchema, OutcomeRequest: outcomeRequestSchema, ProfileUpdate: profileUpdateSchema }[
        name
      ]!;
      for (const field of optional) {
        const given = { ...base[name], [field]: null, ...(field === 'preferredFraming' ? { communicationStyle: 'warm' } : {}) };
        expect({ field, accepted: zodSchema.safeParse(given).success }).toEqual({ field, accepted: true });
      }
    },
  );

  it('lists the probes, metrics and this reference as keyless operations', () => {
    const keyless = Object.fromEntries(
      operations()
        .filter(({ operation }) => operation.tags.includes('Operations') || operation.tags.includes('Reference'))
        .map(({ where, operation }) => [where, { tags: operation.tags, security: operation.security }]),
    );
    expect(keyless).toEqual({
      'GET /healthz': { tags: ['Operations'], security: [] },
      'GET /readyz': { tags: ['Operations'], security: [] },
      'GET /metrics': { tags: ['Operations'], security: [{}, { adminToken: [] }] },
      'GET /v1/openapi.json': { tags: ['Reference'], security: [] },
      'GET /docs': { tags: ['Reference'], security: [] },
    });
    expect(Object.keys(document.paths['/metrics'].get.responses['200'].content)).toEqual(['text/plain']);
    expect(Object.keys(document.paths['/readyz'].get.responses)).toEqual(expect.arrayContaining(['200', '503']));
  });

  it.each(['/v1/context', '/v1/outcome'])('documents the Idempotency-Key of POST %s and Idempotent-Replayed on its success', (path) => {
    const operation = document.paths[path].post;
    const key = operation.parameters.find((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
    expect(key).toMatchObject({ schema: { type: 'string' } });
    expect(key.required ?? false).toBe(false);
    expect(new RegExp(key.schema.pattern).test('a'.repeat(255))).toBe(true);
    expect(new RegExp(key.schema.pattern).test('a'.repeat(256))).toBe(false);
    expect(new RegExp(key.schema.pattern).test('caf\u00e9')).toBe(false);
    // What the API refuses (400 VALIDATION_ERROR), the document refuses too.
    expect(new RegExp(key.schema.pattern).test('a b')).toBe(false);
    const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1] as any;
    expect(Object.keys(success.headers)).toContain('Idempotent-Replayed');
    const codes = Object.values(operation.responses).flatMap((response) => errorVariants(response).map((variant) => variant.code));
    expect(codes).toEqual(expect.arrayContaining(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE']));
  });
});
