import { randomInt, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { chunkKeys, ErrorCode, MnemoError } from '@mnemo/kv-core';
import { inSpan, JsonLogger, tracerFor } from '@mnemo/service-kit';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway.config.js';
import { ClusterModelCache } from '../models/cluster-model.cache.js';
import { TokenizerCache } from '../models/tokenizer.cache.js';
import { NodeClient } from '../nats/node.client.js';
import { NodeDownListener } from '../nats/node-down.listener.js';
import { SchedulerClient, type InferenceRequestInit } from '../nats/scheduler.client.js';
import type { InferCommand } from './infer.command.js';
import { InferMetrics, outcomeOf } from './infer.metrics.js';
import { InferRun } from './infer.run.js';
import { InferWatch, type Continuation, type FailoverDeps } from './infer.watch.js';
import { buildPrompt } from './prompt.builder.js';
import { redispatchUntilPlaced } from './redispatch.retry.js';

/**
 * The inference pipeline, shared by REST chat, REST completions and gRPC Infer: model
 * lookup, tokenization and limits, chunk keys, scheduling over NATS, then an `InferRun`
 * streaming the node's tokens. Resolves once a node admitted the request, so scheduling
 * errors still reach the client as a proper status; later errors come out of the run.
 * Aborting `signal` (client gone) cancels the request on the node. A node that dies under the
 * request is stepped over: the watch re-dispatches it as a continuation (see InferWatch).
 */
@Injectable()
export class InferUseCase {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(ClusterModelCache) private readonly models: ClusterModelCache,
    @Inject(TokenizerCache) private readonly tokenizers: TokenizerCache,
    @Inject(SchedulerClient) private readonly scheduler: SchedulerClient,
    @Inject(NodeClient) private readonly nodes: NodeClient,
    @Inject(InferMetrics) private readonly metrics: InferMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(NodeDownListener) private readonly downs: NodeDownListener,
  ) {}

  async execute(command: InferCommand, signal: AbortSignal): Promise<InferRun> {
    const timer = this.metrics.start(command.operation);
    const parent = command.trace ?? ROOT_CONTEXT;
    timer.span = tracerFor('gateway').startSpan(
      'gateway.request',
      { attributes: { 'mnemo.operation': command.operation, 'mnemo.model': command.model } },
      parent,
    );
    const ctx = trace.setSpan(parent, timer.span);
    const startedAt = Date.now();
    let watch: InferWatch | undefined;
    try {
      const model = await this.models.find(command.model);
      if (!model) {
        throw new MnemoError(ErrorCode.ModelNotFound, `The model '${command.model}' does not exist`, { param: 'model' });
      }
      timer.model = model.id;
      const tokenizer = await this.tokenizers.get(model);
      const prompt = buildPrompt(command, model, tokenizer, this.config.maxPromptTokens);
      if (signal.aborted) throw cancelled();

      const requestId = randomUUID();
      timer.span.setAttribute('mnemo.request_id', requestId);
      // Every request gets a seed so any answer can be reproduced from the log line below.
      const seed = command.seed ?? randomInt(0, 2 ** 48 - 1);
      const deadline = startedAt + this.config.requestTimeoutMs;
      const log = this.logger.child({ requestId });
      const sampling = {
        temperature: command.temperature,
        topP: command.topP,
        maxTokens: prompt.maxTokens,
        seed: BigInt(seed),
        stopTokenIds: [],
        ignoreEos: command.ignoreEos ?? false,
      };
      const failover: FailoverDeps = {
        downs: this.downs,
        prompt: prompt.tokens,
        maxTokens: prompt.maxTokens,
        maxFailovers: this.config.failoverRetries,
        metrics: this.metrics.failover,
        // The same request (id, inbox, deadline) with the streamed tokens as prompt and the sampler that far in.
        // A NATS restart can leave no scheduler or node to take it for a few seconds: waited out within the deadline.
        redispatch: (plan: Continuation, lastAttempt: number) =>
          redispatchUntilPlaced(
            () =>
              this.scheduler.schedule(
                request(
                  plan.tokens,
                  chunkKeys(model.id, command.tenant, plan.tokens),
                  { ...sampling, maxTokens: plan.maxTokens, drawOffset: plan.drawOffset },
                  lastAttempt,
                ),
                Math.max(1, deadline - Date.now()),
              ),
            deadline,
            signal,
            (code, delayMs, retries) => {
              this.metrics.redispatch.retried();
              log.warn('continuation not placed yet: retrying', { code, delayMs, retries });
            },
          ),
      };
      // Subscribe before scheduling: the node may publish its first token before the scheduler replies.
      watch = new InferWatch(
        this.scheduler,
        this.nodes,
        log,
        timer,
        requestId,
        signal,
        {
          idleTimeoutMs: this.config.idleTimeoutMs,
          stallTimeoutMs: this.config.stallTimeoutMs,
          bufferEvents: this.config.streamBufferEvents,
        },
        this.metrics.bufferedEvents,
        failover,
      );
      const inbox = watch.inbox.subject;
      const request = (
        tokens: readonly number[],
        keys: readonly string[],
        s: typeof sampling & { drawOffset?: number },
        attempt = 0,
      ): InferenceRequestInit => ({
        requestId,
        tenant: command.tenant,
        sessionId: command.sessionId ?? '',
        model: model.id,
        tokens: [...tokens],
        chunkKeys: [...keys],
        priority: command.priority,
        sampling: s,
        replySubject: inbox,
        deadlineUnixMs: deadline,
        attempt,
      });
      const placement = await inSpan(tracerFor('gateway'), 'gateway.schedule', ctx, (scheduleCtx) =>
        this.scheduler.schedule(request(prompt.tokens, prompt.chunkKeys, sampling), Math.max(1, deadline - Date.now()), scheduleCtx),
      );
      watch.admitted(placement, deadline);
      if (signal.aborted) throw cancelled();
      // With the seed and the prompt size, this line is enough to reproduce the answer.
      log.info('request admitted', {
        nodeId: placement.nodeId,
        attempt: placement.attempt,
        operation: command.operation,
        model: model.id,
        tenant: command.tenant,
        sessionId: command.sessionId,
        promptTokens: prompt.tokens.length,
        chunks: prompt.chunkKeys.length,
        maxTokens: prompt.maxTokens,
        seed,
      });
      const w = watch;
      return new InferRun(requestId, model.id, Math.floor(startedAt / 1000), prompt.tokens.length, {
        queue: w.queue,
        tokenizer,
        timer,
        stop: command.stop,
        release: (reason) => w.release(reason),
        stalled: w.stalled,
      });
    } catch (e) {
      watch?.release(signal.aborted ? 'client_disconnected' : undefined);
      timer.end(outcomeOf(e));
      throw e;
    }
  }
}

function cancelled(): MnemoError {
  return new MnemoError(ErrorCode.Cancelled, 'the client closed the request');
}
