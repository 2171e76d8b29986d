export { CosClient, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, type CosClientOptions } from './client';
export { CosConnectionError, CosError, ERROR_CODES, type CosErrorCode, type ErrorCode, type ErrorDetails, type FieldError } from './errors';
export type { RateLimit } from './rate-limit';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
export type { FetchLike, Method, RequestOptions, ResponseInfo, RetryInfo } from './transport';
export * from './types';
export { SDK_VERSION } from './version';
export {
  WEBHOOK_ENVIRONMENTS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEnvironment,
  type WebhookEvent,
  type WebhookEventType,
} from './webhook-event';
export {
  DEFAULT_WEBHOOK_TOLERANCE,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from './webhook-verify';
