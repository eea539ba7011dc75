import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError, TenantRateLimiter } from '@mnemo/kv-core';
import type { KvExplanation } from '@mnemo/proto';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway.config.js';
import { SchedulerClient } from '../nats/scheduler.client.js';

/** How long the records answer for (SCHEDULER_WHY_TTL_MS by default); said in a 404. */
const ID = /^[A-Za-z0-9-]{1,128}$/;

/** The JSON of GET /v1/requests/{id}/kv. */
export interface RequestKvView {
  readonly request_id: string;
  readonly model: string;
  readonly node_id: string;
  readonly policy: string;
  readonly attempt: number;
  readonly scheduled_at: string;
  readonly prompt_tokens: number;
  readonly cached_tokens: number;
  /** Prompt tokens by where their KV came from: device, host, ssd, peer, droidspeak (reused, not cached), computed. */
  readonly tokens_by_source: Record<string, number>;
  readonly node_record: boolean;
  /** Why routing chose the node, its estimated time to first token there and every candidate's, ms; admission and first token on it. */
  readonly route: RouteView;
  readonly chunks: Array<Record<string, string | number>>;
}

export interface RouteView {
  readonly reason: string;
  readonly estimate_ms: number;
  readonly candidates: Array<{ node_id: string; queue_ms: number; kv_ms: number; total_ms: number }>;
  readonly admitted_at?: string;
  readonly first_token_at?: string;
}

/** The one answer to any malformed id, whatever its shape (400 invalid_request, docs/observability.md). */
export function malformedRequestId(): MnemoError {
  return new MnemoError(ErrorCode.InvalidRequest, 'a request id is a chatcmpl-… or cmpl-… id, or the x-request-id of a response', {
    param: 'id',
  });
}

/** The gateway's request id from what a client saw: `chatcmpl-<id>`, `cmpl-<id>`, or the id itself. */
export function requestIdOf(id: string): string {
  const bare = id.replace(/^(chatcmpl|cmpl)-/, '');
  if (!ID.test(bare)) throw malformedRequestId();
  return bare;
}

/**
 * `why` for one request (GET /v1/requests/{id}/kv, `mnemo why`): asks the schedulers over NATS;
 * one replica answers from the shared routing record, with the node's record folded in. An unknown
 * id, one whose record has aged out and another tenant's request are the same 404. Lookups are
 * rate-limited per tenant (429), so guessing ids costs the guesser, not the schedulers.
 */
@Injectable()
export class RequestKvUseCase {
  private readonly limiter: TenantRateLimiter;

  constructor(
    @Inject(SchedulerClient) private readonly scheduler: SchedulerClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.limiter = new TenantRateLimiter(config.whyLimit);
  }

  async execute(tenant: string, id: string, admin: boolean): Promise<RequestKvView> {
    const requestId = requestIdOf(id);
    const d = this.limiter.take(tenant, Date.now());
    if (!d.ok) {
      const { ratePerSec, burst } = this.config.whyLimit;
      throw new MnemoError(
        ErrorCode.Overloaded,
        `why rate limit exceeded for this tenant (${ratePerSec} per second, bursts of ${burst}): retry in ${d.retryAfterMs} ms`,
        { retryAfterMs: d.retryAfterMs },
      );
    }
    const e = await this.scheduler.why({ requestId, tenant, admin }, 3000);
    if (!e)
      throw new MnemoError(ErrorCode.NotFound, `no KV record of request ${requestId}: unknown, older than the records kept, or not yours`);
    return view(e);
  }
}

/** Estimates to the µs (the wire carries doubles). */
const ms = (x: number) => Math.round(x * 1000) / 1000;

function view(e: KvExplanation): RequestKvView {
  const bySource: Record<string, number> = { device: 0, host: 0, ssd: 0, peer: 0, droidspeak: 0, computed: 0 };
  for (const c of e.chunks) {
    for (const part of c.source.split('+'))
      bySource[part === 'unknown' ? 'computed' : part] = (bySource[part] ?? 0) + c.tokens / c.source.split('+').length;
  }
  return {
    request_id: e.requestId,
    model: e.model,
    node_id: e.nodeId,
    policy: e.policy,
    attempt: e.attempt,
    scheduled_at: new Date(Number(e.scheduledUnixMs)).toISOString(),
    prompt_tokens: e.promptTokens,
    cached_tokens: e.cachedTokens,
    tokens_by_source: Object.fromEntries(Object.entries(bySource).map(([k, v]) => [k, Math.round(v)])),
    node_record: e.nodeRecord,
    route: {
      reason: e.routeReason,
      estimate_ms: ms(e.estimateMs),
      candidates: e.candidates.map((c) => ({ node_id: c.nodeId, queue_ms: ms(c.queueMs), kv_ms: ms(c.kvMs), total_ms: ms(c.totalMs) })),
      ...(e.admittedUnixMs > 0n ? { admitted_at: new Date(Number(e.admittedUnixMs)).toISOString() } : {}),
      ...(e.firstTokenUnixMs > 0n ? { first_token_at: new Date(Number(e.firstTokenUnixMs)).toISOString() } : {}),
    },
    chunks: e.chunks.map((c) => ({
      index: c.index,
      start: c.start,
      tokens: c.tokens,
      ...(c.key ? { key: c.key } : {}),
      source: c.source,
      ...(c.reason ? { reason: c.reason } : {}),
      detail: c.detail,
      ...(c.tier ? { tier: c.tier } : {}),
      ...(c.policy ? { policy: c.policy } : {}),
      ...(c.atUnixMs > 0n ? { at: new Date(Number(c.atUnixMs)).toISOString() } : {}),
      ...(c.otherNode ? { other_node: c.otherNode } : {}),
      ...(c.otherModel ? { other_model: c.otherModel } : {}),
    })),
  };
}
