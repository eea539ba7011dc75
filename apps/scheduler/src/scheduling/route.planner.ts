import { Inject, Injectable } from '@nestjs/common';
import { route, type KvDirectory, type RouteDecision, type RoutingCosts, type RoutingPolicyName, type SessionTable } from '@mnemo/kv-core';
import type { InferenceRequest } from '@mnemo/proto';
import { routingCosts, SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { KV_DIRECTORY } from '../kv-directory/kv-report.port.js';
import { NodeRegistry } from '../nodes/node.registry.js';
import { SESSION_TABLE } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';

/** A routing decision with the peers' addresses filled in, ready to stamp on the request. */
export interface PlannedRoute extends RouteDecision {
  readonly kvSourceAddresses: ReadonlyMap<string, string>;
}

/**
 * Gathers what the configured policy (kv-core `route`) needs — live nodes, where the request's
 * prefix lives (KV directory), the session's previous node — and asks it for a node.
 */
@Injectable()
export class RoutePlanner {
  readonly policy: RoutingPolicyName;
  private readonly costs: RoutingCosts;

  constructor(
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(KV_DIRECTORY) private readonly directory: KvDirectory,
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(SCHEDULER_CONFIG) config: SchedulerConfig,
  ) {
    this.policy = config.SCHEDULER_POLICY as RoutingPolicyName;
    this.costs = routingCosts(config);
  }

  /** Null when no live node outside `exclude` serves the model. */
  plan(request: InferenceRequest, exclude: ReadonlySet<string>): PlannedRoute | null {
    const nodes = this.registry
      .all()
      .filter((n) => !exclude.has(n.nodeId))
      .map((n) => ({ ...n, reservations: 0 }));
    const session = request.sessionId ? this.sessions.get(request.tenant, request.sessionId) : undefined;
    const decision = route(this.policy, nodes, { model: request.model, chunkKeys: request.chunkKeys, prefixes: this.directory.prefixes(request.chunkKeys), sessionHome: session?.nodeId }, this.costs);
    if (!decision) return null;
    this.metrics.routingDecisions.inc({ policy: this.policy, reason: decision.reason });
    const kvSourceAddresses = new Map(decision.kvSources.map((s) => [s.nodeId, this.registry.get(s.nodeId)?.grpcAddress ?? '']));
    return { ...decision, kvSourceAddresses };
  }
}
