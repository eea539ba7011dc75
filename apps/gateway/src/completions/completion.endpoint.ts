import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { requestTenant } from '../auth/api-key.guard.js';
import { extractTrace, recordGetter } from '@mnemo/service-kit';
import { clientAbortSignal } from './client-abort.signal.js';
import { CompletionResponder } from './completion.responder.js';
import type { InferOperation, ParsedInferRequest } from './infer.command.js';
import { InferMetrics } from './infer.metrics.js';
import { InferUseCase } from './infer.use-case.js';
import type { OpenAiFormat } from './openai.formats.js';

/** What distinguishes one OpenAI completion route from another. */
export interface CompletionRoute {
  readonly operation: InferOperation;
  readonly parse: (body: unknown, tenant: string) => ParsedInferRequest;
  readonly format: OpenAiFormat;
  /** `chatcmpl` or `cmpl`, as OpenAI prefixes its ids. */
  readonly idPrefix: string;
}

/**
 * The one path every REST completion takes: parse (a rejected body is counted and never
 * reaches the scheduler), run the infer use case with the client's disconnect as its abort
 * signal, write the answer as JSON or SSE.
 */
@Injectable()
export class CompletionEndpoint {
  constructor(
    @Inject(InferUseCase) private readonly infer: InferUseCase,
    @Inject(CompletionResponder) private readonly responder: CompletionResponder,
    @Inject(InferMetrics) private readonly metrics: InferMetrics,
  ) {}

  async serve(route: CompletionRoute, req: Request, res: Response, body: unknown): Promise<void> {
    let parsed: ParsedInferRequest;
    try {
      parsed = route.parse(body, requestTenant(req));
    } catch (e) {
      this.metrics.rejected(route.operation, e);
      throw e;
    }
    const run = await this.infer.execute({ ...parsed.command, trace: extractTrace(req.headers, recordGetter) }, clientAbortSignal(res));
    await this.responder.respond(res, run, { ...parsed, format: route.format, idPrefix: route.idPrefix });
  }
}
