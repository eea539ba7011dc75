import { Inject, Injectable } from '@nestjs/common';
import { JsonLogger } from '@mnemo/service-kit';
import { toOpenAiError, type MappedError } from './openai-error.mapper.js';

/**
 * Maps an error for the client and logs it when it is the server's fault. Every path
 * that turns an error into a response (exception filter, SSE error event, gRPC status)
 * goes through here, so each 5xx is logged exactly once, with the id the client saw.
 */
@Injectable()
export class ErrorReporter {
  constructor(@Inject(JsonLogger) private readonly logger: JsonLogger) {}

  report(e: unknown, context: Record<string, unknown>): MappedError {
    const mapped = toOpenAiError(e);
    if (mapped.errorId !== undefined) {
      this.logger.emit('error', 'request failed', { errorId: mapped.errorId, status: mapped.status, err: serialize(e), ...context });
    }
    return mapped;
  }
}

/** Errors from another realm (vm contexts, worker copies) fail `instanceof Error`; log their fields anyway. */
function serialize(e: unknown): unknown {
  if (typeof e !== 'object' || e === null) return e;
  const err = e as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown };
  return { name: err.name, message: err.message, code: err.code, stack: err.stack };
}
