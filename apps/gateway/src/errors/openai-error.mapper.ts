import { randomUUID } from 'node:crypto';
import { HttpException } from '@nestjs/common';
import { ErrorCode, errorStatus, isMnemoError, type MnemoError } from '@mnemo/kv-core';

/** `{"error": {...}}` exactly as the OpenAI API returns it. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface MappedError {
  readonly status: number;
  readonly body: OpenAiErrorBody;
  /** Set for 5xx: the id the client sees and the log line carries. */
  readonly errorId?: string;
  /** Set when the client should wait before trying again (a rate limit): whole seconds, for Retry-After. */
  readonly retryAfterS?: number;
}

/**
 * The one translation from anything thrown in the gateway to an HTTP status and an
 * OpenAI error body. Domain errors map through `errorStatus`; framework and body-parser
 * errors keep their 4xx status; anything else is a 500 whose details stay in the log.
 */
export function toOpenAiError(e: unknown): MappedError {
  if (isMnemoError(e)) return fromMnemo(e);
  // Nest wraps body-parser errors in an HttpException; the cause says what really happened.
  const parser = bodyParserError(e) ?? bodyParserError((e as { cause?: unknown })?.cause);
  if (parser) return parser;
  if (e instanceof HttpException) {
    const status = e.getStatus();
    if (status < 500) {
      const code = status === 404 ? ErrorCode.NotFound : status === 401 ? ErrorCode.Unauthenticated : ErrorCode.InvalidRequest;
      return { status, body: body(httpMessage(e), errorStatus(code).openaiType, null, code) };
    }
  }
  const errorId = randomUUID();
  return {
    status: 500,
    errorId,
    body: body(`internal server error (error id ${errorId})`, errorStatus(ErrorCode.Internal).openaiType, null, ErrorCode.Internal),
  };
}

/** The OpenAI `code` for a domain code; the one rename keeps OpenAI clients' context-overflow handling working. */
export function openAiCode(code: ErrorCode): string {
  return code === ErrorCode.PromptTooLong ? 'context_length_exceeded' : code;
}

function fromMnemo(e: MnemoError): MappedError {
  const { http, openaiType } = errorStatus(e.code);
  const param = typeof e.details?.param === 'string' ? e.details.param : null;
  const retryMs = e.details?.retryAfterMs;
  const retry = typeof retryMs === 'number' && retryMs >= 0 ? { retryAfterS: Math.max(1, Math.ceil(retryMs / 1000)) } : {};
  if (http < 500) return { status: http, body: body(e.message, openaiType, param, openAiCode(e.code)), ...retry };
  const errorId = randomUUID();
  return { status: http, errorId, body: body(`${e.message} (error id ${errorId})`, openaiType, param, openAiCode(e.code)) };
}

/** body-parser (express.json) reports malformed and oversize bodies as errors with `type` and `status`. */
function bodyParserError(e: unknown): MappedError | undefined {
  const err = e as { type?: unknown; status?: unknown; limit?: unknown };
  if (typeof err?.type !== 'string' || typeof err.status !== 'number') return undefined;
  switch (err.type) {
    case 'entity.parse.failed':
      return { status: 400, body: body('request body is not valid JSON', 'invalid_request_error', null, ErrorCode.InvalidRequest) };
    case 'entity.too.large':
      return {
        status: 413,
        body: body(`request body exceeds the limit of ${String(err.limit)} bytes`, 'invalid_request_error', null, 'request_too_large'),
      };
    default:
      return err.status >= 400 && err.status < 500
        ? {
            status: err.status,
            body: body(`unreadable request body (${err.type})`, 'invalid_request_error', null, ErrorCode.InvalidRequest),
          }
        : undefined;
  }
}

function httpMessage(e: HttpException): string {
  const r = e.getResponse();
  if (typeof r === 'string') return r;
  const m = (r as { message?: unknown }).message;
  return Array.isArray(m) ? m.join('; ') : typeof m === 'string' ? m : e.message;
}

function body(message: string, type: string, param: string | null, code: string | null): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}
