import { buildOpenApiDocument, type OpenApiDocument } from './document';
import { renderDocsPage } from './docs-page';

export interface ApiReference {
  document: OpenApiDocument;
  /** GET /v1/openapi.json */
  json: string;
  /** GET /docs */
  html: string;
}

let built: ApiReference | undefined;

/** The document and its HTML rendering, built once per process (at start-up, by createApp). */
export function apiReference(): ApiReference {
  if (!built) {
    const document = buildOpenApiDocument();
    built = { document, json: JSON.stringify(document), html: renderDocsPage(document) };
  }
  return built;
}
