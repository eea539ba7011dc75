import { Inject, Injectable, Optional } from '@nestjs/common';
import { blocksFor, chunkKeys, ErrorCode, MnemoError, routeContext, seedPromptLength } from '@mnemo/kv-core';
import type { Engine } from '@mnemo/engine';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from '../batching/sequence.store.js';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import type { AdmitInferenceCommand } from './admit-inference.command.js';
import { CancelledAttempts } from './cancelled-attempts.js';
import { checkKvSources } from '../peers/kv-sources.check.js';
import { demandSession, ELASTIC_CACHE, NO_ELASTIC_CACHE, type ElasticCachePort } from '../elastic/elastic-cache.port.js';
import { AdvisoryArrivals } from '../prefetch/advisory.arrivals.js';

/**
 * Checks a dispatched request against what this node can do and queues it for the batch
 * scheduler. Everything that would make the engine fail later is refused here, with a code
 * the gateway maps to a status; `overloaded` tells the scheduler to try another node.
 */
@Injectable()
export class AdmitInferenceUseCase {
  constructor(
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(NodeLifecycle) private readonly lifecycle: NodeLifecycle,
    @Inject(CancelledAttempts) private readonly cancelled: CancelledAttempts,
    @Optional() @Inject(ELASTIC_CACHE) private readonly elastic: ElasticCachePort = NO_ELASTIC_CACHE,
    @Optional() @Inject(AdvisoryArrivals) private readonly advisories: AdvisoryArrivals | null = null,
  ) {}

  execute({ request, trace }: AdmitInferenceCommand): string {
    if (!this.lifecycle.accepting) throw new MnemoError(ErrorCode.Overloaded, 'node is shutting down');
    if (!request.requestId || !request.replySubject)
      throw new MnemoError(ErrorCode.InvalidRequest, 'request_id and reply_subject are required');
    const model = this.engine.models().find((m) => m.id === request.model);
    if (!model) throw new MnemoError(ErrorCode.ModelNotFound, `model ${request.model} is not served by node ${this.config.NODE_ID}`);
    if (request.tokens.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'empty prompt');
    const bad = request.tokens.find((t) => t >= model.vocabSize);
    if (bad !== undefined)
      throw new MnemoError(ErrorCode.InvalidRequest, `token id ${bad} is outside the vocabulary of ${model.id} (${model.vocabSize})`);
    const drawOffset = request.sampling?.drawOffset ?? 0;
    if (seedPromptLength(request.tokens.length, drawOffset) === null) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `sampling.draw_offset ${drawOffset} must be less than the prompt's ${request.tokens.length} tokens`,
      );
    }
    if (request.tokens.length >= model.maxContext) {
      throw new MnemoError(
        ErrorCode.PromptTooLong,
        `prompt of ${request.tokens.length} tokens leaves no room in the context of ${model.id} (${model.maxContext})`,
      );
    }
    // The keys name the prompt's KV in every cache; wrong keys would store or serve the wrong KV.
    const keys = chunkKeys(model.id, request.tenant, request.tokens);
    if (keys.length !== request.chunkKeys.length || keys.some((k, i) => k !== request.chunkKeys[i])) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `chunk_keys do not match chunkKeys(model, tenant, tokens): ${request.chunkKeys.length} given, ${keys.length} expected`,
      );
    }
    checkKvSources(request.kvSources);
    const seq = new Sequence(request, model, this.store.arrivalSeq(), this.clock.monotonicMs());
    if (trace) seq.trace = trace;
    // A request whose whole context could not fit the empty device cache would never finish: refuse it now.
    // Its KV holds the prompt and every generated token but the last.
    const need = blocksFor(request.tokens.length + seq.maxTokens - 1);
    // On a shared budget a request may use up to the whole budget: lent units come back on demand, idle ones are borrowed.
    const capacity = Math.max(this.elastic.limit(model.id), this.engine.kvBudget(model.id).capacity);
    // Beyond that, the layer stream cache holds a longer context with only a window of layers on the device.
    const streamLimit = this.engine.layerStream?.limit(model.id, capacity) ?? 0;
    const route = routeContext(need, capacity, streamLimit);
    if (route === null) {
      const stream = this.engine.layerStream ? `, ${streamLimit} through the layer stream cache` : '';
      throw new MnemoError(
        ErrorCode.PromptTooLong,
        `prompt (${request.tokens.length} tokens) plus max_tokens (${seq.maxTokens}) needs ${need} KV blocks ` +
          `of 16 tokens; node ${this.config.NODE_ID} has ${capacity} for ${model.id} on the device${stream}`,
      );
    }
    seq.streamed = route === 'stream';
    if (request.deadlineUnixMs > 0 && this.clock.unixMs() > request.deadlineUnixMs)
      throw new MnemoError(ErrorCode.Timeout, 'deadline passed before admission');
    if (this.cancelled.has(request.requestId, request.attempt))
      throw new MnemoError(
        ErrorCode.Cancelled,
        `request ${request.requestId} (attempt ${request.attempt}) was cancelled before it arrived`,
      );
    if (this.store.has(request.requestId)) throw new MnemoError(ErrorCode.Conflict, `request ${request.requestId} is already running here`);
    if (this.store.count('waiting') >= this.config.NODE_MAX_WAITING!) throw new MnemoError(ErrorCode.Overloaded, 'queue full');
    this.elastic.makeRoom(model.id, need, demandSession(request));
    this.store.add(seq);
    // Judged once admitted: a request refused here runs elsewhere, which the scheduler judges.
    this.advisories?.arrived(request.sessionId, model.id);
    return this.config.NODE_ID;
  }
}
