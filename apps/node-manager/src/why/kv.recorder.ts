import { ROOT_CONTEXT, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { KvRestorePlan, RestoreSources } from '@mnemo/engine';
import { BoundedRecords, endWithError } from '@mnemo/service-kit';
import type { Sequence } from '../shared/sequence.js';
import type { DropLog } from './drop.log.js';

/** What this node did for one request's prompt KV: the node's half of `why`. */
export interface NodeRequestRecord {
  readonly promptTokens: number;
  readonly deviceTokens: number;
  readonly restored: RestoreSources;
  readonly restoreOk: boolean;
  readonly cachedTokens: number;
  readonly droidspeak?: { readonly base: string; readonly tokens: number };
  readonly admittedUnixMs: number;
  readonly firstTokenUnixMs: number;
}

/** The batch loop tells the recorder about a request's prefill; a port so specs can leave it out. */
export interface KvRecorderPort {
  prefillStarted(seq: Sequence): void;
  /** Wraps a restore plan to see where its tokens come from and whether it worked. */
  restore(seq: Sequence, plan: KvRestorePlan | undefined, deviceTokens: number): KvRestorePlan | undefined;
  firstToken(seq: Sequence, cachedTokens: number): void;
}

export const KV_RECORDER = Symbol('KV_RECORDER');
export const NO_KV_RECORDER: KvRecorderPort = { prefillStarted: () => undefined, restore: (_s, plan) => plan, firstToken: () => undefined };

const NONE: RestoreSources = { host: 0, ssd: 0, peer: 0 };

/**
 * Keeps each request's record (bounded by count and age) and its trace spans: `node.prefill` from
 * the start of its pass to its first token, a `node.restore.<tier>` span per tier a restore reads,
 * and a `node.first_token` mark, all under the admission span the scheduler's dispatch started.
 */
export class KvRecorder implements KvRecorderPort {
  private readonly restores = new WeakMap<Sequence, { deviceTokens: number; sources: RestoreSources; ok: boolean }>();

  constructor(
    readonly records: BoundedRecords<string, NodeRequestRecord>,
    readonly drops: DropLog,
    private readonly tracer: Tracer,
    private readonly now: () => number = Date.now,
  ) {}

  prefillStarted(seq: Sequence): void {
    seq.prefillSpan ??= this.tracer.startSpan(
      'node.prefill',
      { attributes: { 'mnemo.request_id': seq.id, 'mnemo.model': seq.request.model } },
      seq.trace ?? ROOT_CONTEXT,
    );
  }

  restore(seq: Sequence, plan: KvRestorePlan | undefined, deviceTokens: number): KvRestorePlan | undefined {
    if (!plan) return plan;
    const sources = plan.sources?.() ?? NONE;
    const parent = seq.prefillSpan ? trace.setSpan(seq.trace ?? ROOT_CONTEXT, seq.prefillSpan) : (seq.trace ?? ROOT_CONTEXT);
    const spans: Span[] = (['host', 'ssd', 'peer'] as const)
      .filter((t) => sources[t] > 0)
      .map((t) =>
        this.tracer.startSpan(
          `node.restore.${t}`,
          {
            attributes: {
              'mnemo.tokens': sources[t],
              ...(t === 'peer' && sources.peerAddress ? { 'mnemo.peer': sources.peerAddress } : {}),
            },
          },
          parent,
        ),
      );
    return {
      until: plan.until,
      load: (layer) => plan.load(layer),
      ...(plan.loadInto
        ? { loadInto: (layer: number, target: Parameters<NonNullable<KvRestorePlan['loadInto']>>[1]) => plan.loadInto!(layer, target) }
        : {}),
      sources: () => sources,
      done: (ok, blockedMs) => {
        this.restores.set(seq, { deviceTokens, sources, ok });
        for (const s of spans) {
          s.setAttribute('mnemo.blocked_ms', blockedMs ?? 0);
          if (ok) s.end();
          else endWithError(s, new Error('restore failed: the pass recomputed'));
        }
        plan.done?.(ok, blockedMs);
      },
    };
  }

  firstToken(seq: Sequence, cachedTokens: number): void {
    const r = this.restores.get(seq);
    const now = this.now();
    this.records.set(seq.id, {
      promptTokens: seq.request.tokens.length,
      deviceTokens: r ? r.deviceTokens : cachedTokens,
      restored: r?.ok ? r.sources : NONE,
      restoreOk: r?.ok ?? true,
      cachedTokens,
      ...(seq.kvReuse ? { droidspeak: { base: seq.kvReuse.baseModel, tokens: seq.kvReuse.reusedTokens } } : {}),
      admittedUnixMs: Math.round(now - (this.nowMonotonicDelta(seq) ?? 0)),
      firstTokenUnixMs: now,
    });
    const span = seq.prefillSpan;
    if (span) {
      span.setAttribute('mnemo.cached_tokens', cachedTokens);
      this.tracer
        .startSpan('node.first_token', { attributes: { 'mnemo.request_id': seq.id } }, trace.setSpan(seq.trace ?? ROOT_CONTEXT, span))
        .end();
      span.end();
      seq.prefillSpan = undefined;
    }
  }

  /** Milliseconds from admission to now on the monotonic clock, when the sequence knows both. */
  private nowMonotonicDelta(seq: Sequence): number | undefined {
    return seq.firstTokenMs !== undefined ? seq.firstTokenMs - seq.arrivedMs : undefined;
  }
}
