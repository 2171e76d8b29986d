/**
 * The API's lean HTTP layer on Express (docs/adr/0016-hot-path.md): everything the hot path does
 * differently from a plain Express app, and nothing else. The rest of the API uses Express as
 * usual and reaches this layer only through this module:
 *
 * - `frontDoor`, `exactRoutes`: the static paths (/v1/context, /v1/outcome) answered without
 *   Express's dispatch; every other request goes to the app.
 * - `ownMessages`: the server's requests and responses made with the app's prototypes.
 * - `pipeline`: a route's steps as one handler.
 * - `jsonBody`: a UTF-8 JSON body read straight from the stream.
 * - `sendJson`, `sendJsonText`: a JSON answer without Express's per-call lookups.
 */
export { exactRoutes, frontDoor, ownMessages, type ApiApp, type ExactRoutes } from './front-door';
export { pipeline, type BeforeError } from './pipeline';
export { BODY_LIMIT_BYTES, jsonBody } from './json-body';
export { sendJson, sendJsonText } from './send-json';
