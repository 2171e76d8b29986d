/** The document's introduction: what holds for every endpoint (docs/API.md, Conventions). */
export const API_DESCRIPTION = [
  'Learns per end user how to present a task. This document is generated from the schemas the API validates with; it is served at GET /v1/openapi.json and rendered at GET /docs (neither needs a key).',
  "Authentication: every /v1 endpoint needs `Authorization: Bearer <key>` with the endpoint's scope (context, outcome or profile). Data is partitioned by the key's account and environment (test or live).",
  'Bodies are JSON objects (`Content-Type: application/json`), at most 65,536 bytes; schemas are strict (an unknown field is a VALIDATION_ERROR); text must be valid Unicode without NUL.',
  'Order of checks, the first failing answers: route (an unknown path is a 404 RouteNotFound, another method on a known path a 405 MethodNotAllowed with Allow, OPTIONS a 204 with Allow, none needing a key) → authentication (401, 403) → rate limit (429) → body (413, 415, 400) → the operation (400, 404, 409, 410). A backing service that is unreachable, or a request not answered within its deadline (REQUEST_DEADLINE, 2 s) because one hangs, is a 503 with Retry-After; what the HTTP server cannot parse is a 400, headers over 16 KiB a 431, a client too slow to send its request a 408.',
  'Every response carries X-Request-Id. Live keys are rate limited per second and per month and their responses carry X-RateLimit-Limit, -Remaining and -Reset (not a 401); test keys are unlimited and get none. HEAD works wherever GET does.',
  'Errors: `{"error": {"code", "message", "statusCode", "traceId", "docUrl", "details"?}}`, never a stack trace: `traceId` is the response\'s X-Request-Id (not a decision\'s requestId), `docUrl` the code\'s section of GET /docs. Each response lists its codes and their details.',
].join('\n\n');

export const TAGS = [
  { name: 'Context', description: 'Ask how to present a task.' },
  { name: 'Outcomes', description: 'Report what happened, so the service learns.' },
  { name: 'Profiles', description: 'What the service has learned per user: read, pin, erase, history.' },
  { name: 'Operations', description: 'Probes and metrics for the platform running the service; no API key.' },
  { name: 'Reference', description: 'This document and its web page; no API key.' },
  {
    name: 'Webhooks',
    description:
      "Events the service POSTs to an account's endpoints (added in the dashboard or with `cos webhooks add`), signed per the Standard Webhooks specification.",
  },
];
