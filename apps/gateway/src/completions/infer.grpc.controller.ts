import { grpcTraceContext } from '@mnemo/service-kit';
import { Inject, Injectable } from '@nestjs/common';
import type { ServerWritableStream, StatusObject } from '@grpc/grpc-js';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { FinishReason, type KvReuse } from '@mnemo/proto';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator.js';
import { ErrorReporter } from '../errors/error.reporter.js';
import { authorizationOf, grpcFailure } from '../grpc/grpc.call.js';
import { parseChatRequest } from './chat-request.parser.js';
import { parseCompletionRequest } from './completion-request.parser.js';
import type { InferCommand } from './infer.command.js';
import { InferMetrics } from './infer.metrics.js';
import { InferUseCase } from './infer.use-case.js';
import type { Usage } from './infer.run.js';

/** `mnemo.v1.InferRequest` as @grpc/proto-loader hands it over (PROTO_LOADER_OPTIONS: camelCase, unset optionals undefined). */
export interface GrpcInferRequest {
  model: string;
  prompt: string;
  messages: Array<{ role: string; content: string }>;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  sessionId: string;
  priority: number;
}

/** `mnemo.v1.InferChunk`. */
export interface GrpcInferChunk {
  id: string;
  text: string;
  tokenIds: number[];
  finishReason?: FinishReason;
  usage?: { promptTokens: number; completionTokens: number; cachedTokens: number; kvReuse?: GrpcKvReuse };
}

/** `mnemo.v1.KvReuse`: proto-loader's plain object has the generated message's fields. */
type GrpcKvReuse = Omit<KvReuse, '$typeName' | '$unknown'>;

/**
 * gRPC `Infer`: maps the proto request onto the same parsers and the same use case as the
 * REST endpoints, so validation, limits and errors are identical; only the framing differs.
 */
@Injectable()
export class InferGrpcController {
  constructor(
    @Inject(InferUseCase) private readonly infer: InferUseCase,
    @Inject(ApiKeyAuthenticator) private readonly auth: ApiKeyAuthenticator,
    @Inject(InferMetrics) private readonly metrics: InferMetrics,
    @Inject(ErrorReporter) private readonly reporter: ErrorReporter,
  ) {}

  async handle(call: ServerWritableStream<GrpcInferRequest, GrpcInferChunk>): Promise<void> {
    const ac = new AbortController();
    call.on('cancelled', () => ac.abort());
    let requestId: string | undefined;
    try {
      const tenant = this.auth.authenticate(authorizationOf(call.metadata));
      let command: InferCommand;
      try {
        command = toCommand(call.request, tenant);
      } catch (e) {
        this.metrics.rejected('grpc.infer', e);
        throw e;
      }
      const run = await this.infer.execute({ ...command, trace: grpcTraceContext(call.metadata) }, ac.signal);
      requestId = run.requestId;
      for await (const ev of run.events()) {
        if (ev.kind === 'delta') {
          await write(call, { id: run.requestId, text: ev.text, tokenIds: [...ev.tokenIds] }, run.stalled);
        } else {
          const finishReason = ev.finishReason === 'length' ? FinishReason.LENGTH : FinishReason.STOP;
          await write(call, { id: run.requestId, text: '', tokenIds: [], finishReason, usage: grpcUsage(ev.usage) }, run.stalled);
        }
      }
      call.end();
    } catch (e) {
      if (call.cancelled) return;
      call.emit('error', grpcFailure(this.reporter, e, { requestId }) satisfies Partial<StatusObject>);
    }
  }
}

/** One of `messages` (chat template) or `prompt` (raw text); both go through the REST parsers. */
function toCommand(r: GrpcInferRequest, tenant: string): InferCommand {
  const common = {
    model: r.model,
    max_tokens: r.maxTokens,
    temperature: r.temperature,
    top_p: r.topP,
    seed: r.seed,
    session_id: r.sessionId || undefined,
    priority: r.priority,
  };
  if (r.messages.length > 0 && r.prompt !== '') {
    throw new MnemoError(ErrorCode.InvalidRequest, 'set either prompt or messages, not both', { param: 'prompt' });
  }
  const parsed =
    r.messages.length > 0
      ? parseChatRequest({ ...common, messages: r.messages }, tenant)
      : parseCompletionRequest({ ...common, prompt: r.prompt }, tenant);
  return { ...parsed.command, operation: 'grpc.infer' };
}

/**
 * Writes a chunk; waits for the stream to drain (a slow client slows the reader), for cancellation, or until the run gives the client up.
 */
function write(call: ServerWritableStream<GrpcInferRequest, GrpcInferChunk>, chunk: GrpcInferChunk, stalled: AbortSignal): Promise<void> {
  if (call.cancelled || stalled.aborted || call.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      stalled.removeEventListener('abort', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
    stalled.addEventListener('abort', done, { once: true });
  });
}

function grpcUsage({ kvReuse, ...u }: Usage): GrpcInferChunk['usage'] {
  if (!kvReuse) return { ...u };
  return {
    ...u,
    kvReuse: {
      baseModel: kvReuse.baseModel,
      ...kvReuse.pattern,
      recomputedLayers: [...kvReuse.recomputedLayers],
      reusedTokens: kvReuse.reusedTokens,
    },
  };
}
