import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { ErrorReporter } from '../errors/error.reporter.js';
import type { InferRun } from './infer.run.js';
import { toOpenAiUsage, type OpenAiFormat, type RunHeader } from './openai.formats.js';
import { SseWriter } from './sse.writer.js';

export interface RespondOptions {
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly format: OpenAiFormat;
  /** `chatcmpl` or `cmpl`, as OpenAI prefixes its ids. */
  readonly idPrefix: string;
}

/**
 * Writes a run as one JSON response or as an SSE stream. Before the first byte, errors
 * propagate to the exception filter (proper status); once streaming, an error becomes an
 * `{"error": ...}` event followed by `[DONE]`, which the OpenAI SDKs raise as an APIError.
 */
@Injectable()
export class CompletionResponder {
  constructor(@Inject(ErrorReporter) private readonly reporter: ErrorReporter) {}

  async respond(res: Response, run: InferRun, o: RespondOptions): Promise<void> {
    const h: RunHeader = { id: `${o.idPrefix}-${run.requestId}`, model: run.model, created: run.created };
    res.setHeader('X-Request-Id', run.requestId);
    if (!o.stream) return this.whole(res, run, h, o.format);
    const sse = new SseWriter(res);
    // A client that leaves the stream unread past the stall limit loses its connection: its buffers go with it.
    const cut = () => res.destroy();
    run.stalled.addEventListener('abort', cut, { once: true });
    sse.open();
    try {
      const opening = o.format.opening(h);
      if (opening) await sse.send(opening);
      for await (const ev of run.events()) {
        if (ev.kind === 'delta') {
          if (ev.text) await sse.send(o.format.delta(h, ev.text));
        } else if (o.includeUsage) {
          await sse.send(o.format.finish(h, ev.finishReason, null));
          await sse.send(o.format.usageOnly(h, toOpenAiUsage(ev.usage)));
        } else {
          // Mnemo always reports usage, on the last chunk, even unasked.
          await sse.send(o.format.finish(h, ev.finishReason, toOpenAiUsage(ev.usage)));
        }
      }
    } catch (e) {
      const mapped = this.reporter.report(e, { requestId: run.requestId, stream: true });
      if (!res.destroyed) await sse.send(mapped.body);
    } finally {
      run.stalled.removeEventListener('abort', cut);
      sse.done();
    }
  }

  private async whole(res: Response, run: InferRun, h: RunHeader, format: OpenAiFormat): Promise<void> {
    let text = '';
    for await (const ev of run.events()) {
      if (ev.kind === 'delta') text += ev.text;
      else {
        res.status(200).json(format.complete(h, text, ev.finishReason, toOpenAiUsage(ev.usage)));
        return;
      }
    }
  }
}
