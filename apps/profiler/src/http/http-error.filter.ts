import { randomUUID } from 'node:crypto';
import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { ErrorCode, errorStatus, isMnemoError } from '@mnemo/kv-core';
import { JsonLogger } from '@mnemo/service-kit';
import { DATABASE_UNREACHABLE_MESSAGE, isDatabaseUnreachable } from '../database/pg-error.codes.js';

/**
 * The profiler's one translation from a thrown error to an HTTP reply `{ error: { code, message } }`:
 * domain codes through `errorStatus`, framework 4xx (unknown route, malformed JSON) as they are,
 * an unreachable database a 503 `unavailable` with Retry-After (the request may succeed later),
 * anything else a 500 logged once under `err` with the id the client sees.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(@Inject(JsonLogger) private readonly logger: JsonLogger) {}

  catch(e: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (isMnemoError(e) && errorStatus(e.code).http < 500) {
      res.status(errorStatus(e.code).http).json({ error: { code: e.code, message: e.message } });
      return;
    }
    if (isDatabaseUnreachable(e) || (isMnemoError(e) && e.code === ErrorCode.Unavailable)) {
      // Not a bug to log with a stack each time: the outage is logged as it happens, a warning per request is enough.
      this.logger.emit('warn', 'request refused: database unreachable', { err: String((e as Error)?.message ?? e) });
      res.setHeader('Retry-After', '5');
      res.status(503).json({ error: { code: ErrorCode.Unavailable, message: DATABASE_UNREACHABLE_MESSAGE } });
      return;
    }
    if (e instanceof HttpException && e.getStatus() < 500) {
      const code = e.getStatus() === 404 ? ErrorCode.NotFound : ErrorCode.InvalidRequest;
      res.status(e.getStatus()).json({ error: { code, message: e.message } });
      return;
    }
    const errorId = randomUUID();
    this.logger.emit('error', 'request failed', { errorId, err: String((e as Error)?.stack ?? e) });
    res.status(500).json({ error: { code: ErrorCode.Internal, message: `internal error (error id ${errorId})` } });
  }
}
