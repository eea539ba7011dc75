import { Inject, Injectable, Optional } from '@nestjs/common';
import { create } from '@bufbuild/protobuf';
import {
  ErrorCode,
  expectedPrompt,
  judgeReservationEnd,
  MnemoError,
  reservationPrefetchAfter,
  type ExpectedHoldings,
  type KvDirectory,
  type KvSourcePlan,
  type Reservation,
  type ReservationBook,
  type SessionTable,
} from '@mnemo/kv-core';
import { KvSourceSchema, type InferenceRequest } from '@mnemo/proto';
import type { Context } from '@opentelemetry/api';
import { CLOCK, JsonLogger, type Clock } from '@mnemo/service-kit';
import { EXPECTED_HOLDINGS, KV_DIRECTORY } from '../kv-directory/kv-report.port.js';
import { WHY_RECORDS } from '../why/why.ports.js';
import type { RoutingRecords } from '../why/routing.records.js';
import { ROOT_CONTEXT, trace as otel } from '@opentelemetry/api';
import { endWithError, tracerFor } from '@mnemo/service-kit';
import { NodeRegistry } from '../nodes/node.registry.js';
import { NODE_PREFETCHER, type NodePrefetcher } from '../sessions/node-prefetch.port.js';
import { RESERVATION_BOOK, SESSION_TABLE } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { NODE_DISPATCHER, type DispatchOutcome, type NodeDispatcher } from './node-dispatcher.port.js';
import { RoutePlanner } from './route.planner.js';
import type { ScheduleInferenceCommand } from './schedule-inference.command.js';

/** Nodes tried for one request before giving up: enough to step over a node that just died. */
export const MAX_DISPATCH_ATTEMPTS = 3;

/** Where a request runs: the node that admitted it, the dispatch attempt it admitted, and that node's incarnation ("" if unknown). */
export interface Placement {
  readonly nodeId: string;
  readonly attempt: number;
  readonly bootId: string;
}

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/**
 * Picks a live node serving the model (the configured policy, see RoutePlanner and kv-core
 * `route`), stamps where the request's prefix lives elsewhere (`kv_sources`) and dispatches the
 * request to it; tokens then flow node → gateway inbox without the scheduler.
 * A node that does not answer is removed (its heartbeats re-add it if it is alive), told to
 * abandon that attempt, and the next one is tried; one that answers `overloaded` is skipped;
 * any other refusal (bad request) is the request's fault and goes back to the gateway as is.
 * Each dispatch carries its own attempt number (1, 2, …), so events from a node that admitted
 * after we stopped waiting can be told apart from the placement returned here.
 * The prompt is recorded as expected on the chosen node before the dispatch (kv-core
 * `ExpectedHoldings`), so a request routed before that node's KV events arrive — a concurrent
 * one, or the conversation's next turn — finds it there; a failed dispatch takes it back.
 */
@Injectable()
export class ScheduleInferenceUseCase {
  constructor(
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(NODE_DISPATCHER) private readonly dispatcher: NodeDispatcher,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(RoutePlanner) private readonly planner: RoutePlanner,
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RESERVATION_BOOK) private readonly book: ReservationBook,
    @Inject(NODE_PREFETCHER) private readonly nodes: NodePrefetcher,
    @Optional() @Inject(EXPECTED_HOLDINGS) private readonly expected: ExpectedHoldings | null = null,
    @Optional() @Inject(WHY_RECORDS) private readonly why: RoutingRecords | null = null,
    @Optional() @Inject(KV_DIRECTORY) private readonly directory: KvDirectory | null = null,
  ) {}

  /**
   * The request the advisory announced arrived: the reservation is spent; a node that prefetched in
   * vain is told (reservationPrefetchAfter: not when the request pulls its KV from that node).
   */
  private useReservation(r: Reservation, ranOn: string, sources: readonly KvSourcePlan[]): void {
    this.book.release(r.id);
    const after = reservationPrefetchAfter(r.nodeId, ranOn, sources);
    this.metrics.reservationsUsed.inc({ outcome: after === 'hit' ? 'hit' : 'moved' });
    if (after === 'hit') return;
    // On the reserved node, the node judges the advisory (it knows what it found); elsewhere it missed.
    this.metrics.judgedAdvisory(judgeReservationEnd('moved'));
    if (after === 'kept_as_source') {
      this.metrics.nodeForgets.inc({ outcome: 'kept_as_source' });
      return;
    }
    void this.nodes
      .forget(r.nodeId, { advisoryId: r.id, sessionId: r.sessionId })
      .then((o) => this.metrics.nodeForgets.inc({ outcome: o.kind }));
  }

  async execute({ request, trace }: ScheduleInferenceCommand): Promise<Placement> {
    const parent = trace ?? ROOT_CONTEXT;
    const span = tracerFor('scheduler').startSpan(
      'scheduler.schedule',
      { attributes: { 'mnemo.request_id': request.requestId, 'mnemo.model': request.model, 'mnemo.prompt_tokens': request.tokens.length } },
      parent,
    );
    try {
      const placement = await this.schedule(request, otel.setSpan(parent, span));
      span.setAttribute('mnemo.node_id', placement.nodeId);
      span.end();
      return placement;
    } catch (e) {
      endWithError(span, e);
      throw e;
    }
  }

  private async schedule(request: InferenceRequest, ctx: Context): Promise<Placement> {
    validate(request);
    const skipped = new Set<string>();
    // A failover re-dispatch (gateway) names the last attempt it saw: new attempts number on from it.
    const attemptBase = request.attempt;
    for (let attempt = 1; attempt <= MAX_DISPATCH_ATTEMPTS; attempt++) {
      const live = this.registry.all();
      if (!live.some((n) => n.models.includes(request.model))) {
        if (live.length === 0) throw new MnemoError(ErrorCode.NoNodeAvailable, 'no live node');
        if (skipped.size === 0) throw new MnemoError(ErrorCode.ModelNotFound, `no node serves model ${request.model}`);
      }
      const node = this.planner.plan(request, skipped);
      if (!node) break;
      // Reserved before the await: concurrent requests must see this one when they pick.
      this.registry.addPending(node.nodeId);
      this.registry.addBacklog(node.nodeId, node.prefillMs, this.clock.unixMs());
      const expected = this.expected?.record(
        node.nodeId,
        expectedPrompt(request.model, request.tenant, request.tokens, request.chunkKeys),
        this.clock.unixMs(),
      );
      // Every path but an admission gives back what was reserved: a dispatch the node did not take is no load of its.
      const takeBack = () => {
        this.registry.addPending(node.nodeId, -1);
        this.registry.takeBacklog(node.nodeId, node.prefillMs, this.clock.unixMs());
        if (expected) this.expected!.forget(expected);
      };
      const kvSources = node.kvSources.map((s) =>
        create(KvSourceSchema, { nodeId: s.nodeId, grpcAddress: node.kvSourceAddresses.get(s.nodeId) ?? '', chunkKeys: [...s.chunkKeys] }),
      );
      let outcome: DispatchOutcome;
      try {
        const dispatch = tracerFor('scheduler').startSpan(
          'scheduler.dispatch',
          { attributes: { 'mnemo.node_id': node.nodeId, 'mnemo.attempt': attemptBase + attempt } },
          ctx,
        );
        outcome = await this.dispatcher.dispatch(
          node.nodeId,
          { ...request, attempt: attemptBase + attempt, kvSources },
          otel.setSpan(ctx, dispatch),
        );
        dispatch.setAttribute('mnemo.outcome', outcome.kind);
        dispatch.end();
      } catch (e) {
        takeBack();
        throw e;
      }
      this.metrics.dispatches.inc({ outcome: outcome.kind });
      const retryFields = (reason: string) => ({
        nodeId: node.nodeId,
        attempt: attemptBase + attempt,
        reason,
        requestId: request.requestId,
      });
      if (outcome.kind !== 'admitted') takeBack();
      switch (outcome.kind) {
        case 'admitted':
          if (request.sessionId) {
            this.sessions.record({
              tenant: request.tenant,
              sessionId: request.sessionId,
              model: request.model,
              nodeId: node.nodeId,
              chunkKeys: request.chunkKeys,
              promptTokens: request.tokens.length,
              lastUsedMs: this.clock.unixMs(),
            });
          }
          if (node.reservation) this.useReservation(node.reservation, node.nodeId, node.kvSources);
          if (this.why && this.directory)
            this.why.routed(
              request,
              node.nodeId,
              attemptBase + attempt,
              this.directory,
              [...new Set(live.flatMap((n) => n.models))],
              this.clock.unixMs(),
              { reason: node.reason, estimateMs: node.estimateMs, candidates: node.candidates ?? [] },
            );
          return { nodeId: node.nodeId, attempt: attemptBase + attempt, bootId: outcome.bootId };
        case 'unreachable':
          skipped.add(node.nodeId);
          // Nobody on its subject: the node is gone (announced down); a timeout may be a busy node (dropped until its next beat).
          if (this.registry.remove(node.nodeId, outcome.reason === 'no_responders' ? 'unreachable' : 'dispatch_timeout'))
            this.metrics.nodesDropped.inc({ reason: 'unreachable' });
          // It may admit (or have admitted) this attempt after we stopped waiting: it must not stream into the inbox the next attempt uses.
          if (outcome.reason === 'timeout') this.dispatcher.abandon(node.nodeId, request.requestId, attemptBase + attempt);
          this.logger.emit('warn', 'node unreachable, trying another', retryFields(outcome.reason));
          break;
        case 'failed':
          // The node may be fine (NATS reconnecting): it stays registered, this request tries another.
          skipped.add(node.nodeId);
          this.logger.emit('warn', 'dispatch failed, trying another node', retryFields(outcome.reason));
          break;
        case 'refused':
          if (outcome.code !== ErrorCode.Overloaded) {
            const code = KNOWN_CODES.has(outcome.code) ? (outcome.code as ErrorCode) : ErrorCode.Internal;
            throw new MnemoError(code, outcome.message, { nodeId: node.nodeId });
          }
          skipped.add(node.nodeId);
          break;
      }
    }
    throw new MnemoError(ErrorCode.NoNodeAvailable, `no node could take a request for ${request.model}`, { tried: [...skipped] });
  }
}

function validate(r: ScheduleInferenceCommand['request']): void {
  const problems: string[] = [];
  if (!r.requestId) problems.push('request_id is required');
  if (!r.model) problems.push('model is required');
  if (!r.replySubject) problems.push('reply_subject is required');
  if (r.tokens.length === 0) problems.push('tokens must not be empty');
  if (problems.length > 0) throw new MnemoError(ErrorCode.InvalidRequest, problems.join('; '));
}
