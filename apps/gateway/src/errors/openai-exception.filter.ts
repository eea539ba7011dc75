import { Catch, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ErrorReporter } from './error.reporter.js';

/** Every HTTP error, thrown anywhere before a response started, leaves in the OpenAI error shape. */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(ErrorReporter) private readonly reporter: ErrorReporter) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const mapped = this.reporter.report(exception, { method: req.method, path: req.path });
    if (res.headersSent) {
      // A stream already started: its own writer reports errors; all we can do is end it.
      res.end();
      return;
    }
    if (mapped.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
    if (mapped.retryAfterS !== undefined) res.setHeader('Retry-After', String(mapped.retryAfterS));
    res.status(mapped.status).json(mapped.body);
  }
}
