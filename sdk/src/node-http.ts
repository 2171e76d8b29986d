import type * as Http from 'node:http';
import type * as Https from 'node:https';
import { nodeBuiltin } from './builtin';
import type { FetchLike } from './transport';

interface NodeHttp {
  http: typeof Http;
  https: typeof Https;
}

/**
 * A `fetch` over node:http and node:https that sends the URL's path exactly as given. WHATWG
 * fetch parses the URL first and removes `.` and `..` path segments, also written `%2E`, so a
 * user id `..` would reach another path; `http.request` given the path as an option sends it
 * unchanged. Connections are kept alive and reused, as fetch does. Undefined where node:http
 * does not exist (browsers, edge runtimes).
 */
export function nodeHttpFetch(): FetchLike | undefined {
  const http = nodeBuiltin<typeof Http>('node:http');
  const https = nodeBuiltin<typeof Https>('node:https');
  if (http === undefined || https === undefined) return undefined;
  const modules = { http, https };
  const agents = {
    'http:': new modules.http.Agent({ keepAlive: true }),
    'https:': new modules.https.Agent({ keepAlive: true }),
  };
  return (url, init) => request(modules, agents, url, init);
}

/** The parts of an absolute http(s) URL that `http.request` takes, the path untouched. */
function target(url: string): { protocol: 'http:' | 'https:'; hostname: string; port: string; path: string } {
  const match = /^(https?:)\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (!match) throw new TypeError(`Not an http: or https: URL: ${url}`);
  const [, scheme = '', authority = '', rest = ''] = match;
  // Only the origin goes through URL (IPv6 brackets, default ports, IDNA); the path never does.
  const origin = new URL(`${scheme}//${authority}`);
  const protocol = origin.protocol === 'https:' ? 'https:' : 'http:';
  const hostname = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
  const path = rest.startsWith('/') ? rest : `/${rest}`;
  return { protocol, hostname, port: origin.port, path };
}

/** Statuses whose answer has no body, whatever its headers say; a Response refuses one for them. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function request(modules: NodeHttp, agents: Record<'http:' | 'https:', Http.Agent>, url: string, init: RequestInit): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const { signal } = init;
    if (signal?.aborted) return reject(signal.reason);
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string')
      return reject(new TypeError('Only string bodies are supported'));
    const method = init.method ?? 'GET';
    const body = init.body === undefined || init.body === null ? undefined : new TextEncoder().encode(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    if (body !== undefined) headers['content-length'] = String(body.byteLength);

    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (error: unknown) => settle(() => reject(error));
    const { protocol, hostname, port, path } = target(url);
    const client = protocol === 'https:' ? modules.https : modules.http;
    const req = client.request({ protocol, hostname, port: port || undefined, path, method, headers, agent: agents[protocol] });
    const onAbort = () => {
      fail(signal!.reason);
      req.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Uint8Array[] = [];
      res.on('data', (chunk: Uint8Array) => chunks.push(chunk));
      res.on('error', fail);
      res.on('close', () => {
        if (!res.complete) fail(new Error(`The connection closed before the whole answer to ${method} ${path} arrived`));
      });
      res.on('end', () =>
        settle(() => {
          try {
            const status = res.statusCode ?? 0;
            const answer = new Headers();
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) answer.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
            const empty = NULL_BODY_STATUSES.has(status) || method === 'HEAD';
            resolve(new Response(empty ? null : concat(chunks), { status, headers: answer }));
          } catch (error) {
            reject(error);
          }
        }),
      );
    });
    req.end(body);
  });
}

function concat(chunks: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const whole = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}
