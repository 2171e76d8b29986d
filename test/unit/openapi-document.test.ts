import { execFileSync } from 'node:child_process';
import { openApiPath } from '../../api/openapi/document';
import { V1_ROUTES } from '../../api/routes/v1.routes';
import { versionsQuerySchema } from '../../api/schemas/request.schemas';
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

/** The error envelopes a response object's body can be: their code and statusCode. */
function errorVariants(response: any): Array<{ code: string; statusCode: number }> {
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return [];
  return (schema.anyOf ?? [schema]).flatMap((variant: { $ref: string }) => {
    const error = document.components.schemas[variant.$ref.split('/').pop()!].properties.error;
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

  it('documents X-Request-Id on every response, Retry-After on 429 and 503, and rate-limit headers on 429', () => {
    const operations = Object.values(document.paths).flatMap((item: any) => Object.values(item));
    const responses = operations.flatMap((op: any) => Object.entries(op.responses)) as Array<[string, any]>;
    for (const [status, response] of [...responses, ...Object.entries(document.components.responses)] as Array<[string, any]>) {
      const headers = Object.keys(response.headers ?? {});
      expect({ status, headers }).toEqual({ status, headers: expect.arrayContaining(['X-Request-Id']) });
      if (status === '429')
        expect(headers).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
      if (status === '503') expect(headers).toContain('Retry-After');
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
