import { choosePlan, qualityLoss, type ProfiledPattern, type QualityMetric, type ReusePattern } from '@mnemo/kv-core';
import { call, EventQueue } from '../core/event.queue.js';
import type { RooflineCompute } from '../costs/roofline.compute.js';
import type { TransferLink } from '../costs/transfer.port.js';
import { planCost } from './reuse-plan.cost.js';

/** One request of a shared-context workload: the context the base model already prefilled, and when it arrives. */
export interface ReuseRequest {
  readonly arrivalMs: number;
  readonly context: number;
}

/**
 * How each request's prefill is planned. `fixed`: every request runs one pattern (full prefill
 * is recompute-everything, full reuse recompute-nothing). `chosen`: kv-core's `choosePlan` on the
 * pair's frontier at the moment the prefill is scheduled, with the node's load as the live node
 * passes them (the requests still waiting, and the time this one has waited since it arrived:
 * apps/node-manager `CrossModelReuse`), so that a busy GPU moves to cheaper plans (DroidSpeak
 * §4.4) and the wait is charged against the budget, a TTFT SLO counted from arrival. A null
 * choice runs a full prefill, as live. `ignoreWait`: the estimate before the wait was charged
 * (the whole budget left to the prefill, however long the request queued), kept for comparison.
 */
export type ReusePolicy =
  | { readonly kind: 'fixed'; readonly pattern: ReusePattern; readonly qualityLoss: number }
  | {
      readonly kind: 'chosen';
      readonly frontier: readonly ProfiledPattern[];
      readonly maxQualityLoss: number;
      /** The metric the floor holds on (kv-core's; default top1). */
      readonly qualityMetric?: QualityMetric;
      readonly latencyBudgetMs?: number;
      readonly ignoreWait?: boolean;
    };

export interface ReuseServerConfig {
  readonly compute: RooflineCompute;
  /** The link the base model's KV and E cache come over. */
  readonly link: TransferLink;
  /** Tokens after the shared context, new to both models. */
  readonly question: number;
  /** Tokens generated per request, the first by the prefill. */
  readonly outputTokens: number;
  /** Device KV capacity in tokens: a prefill waits while the running sequences would overflow it. */
  readonly kvCapacityTokens: number;
  readonly policy: ReusePolicy;
}

/** Per request, in arrival order. */
export interface ReuseRun {
  readonly ttftMs: Float64Array;
  readonly e2eMs: Float64Array;
  readonly recomputed: Int32Array;
  /** The pattern each request ran. */
  readonly patterns: ReusePattern[];
  /** Quality loss of the plan each request ran, from the profile (0 for a full prefill). */
  readonly qualityLoss: Float64Array;
  readonly fetchMs: Float64Array;
  readonly computeMs: Float64Array;
  /** Virtual time at which the last request finished. */
  readonly endMs: number;
}

interface Running {
  readonly i: number;
  context: number;
  left: number;
}

/**
 * One GPU serving the derived model, vLLM-style (v0 scheduler, no chunked prefill): whenever it
 * is free, the oldest waiting request's prefill goes first if its KV fits beside the running
 * sequences, otherwise one decode step runs every running sequence. The first token comes out of
 * the prefill (TTFT); a request ends after `outputTokens`. A planned prefill fetches the reused
 * layers' KV and the E cache, then computes the rest (`planCost`).
 */
export function serveReuse(requests: readonly ReuseRequest[], cfg: ReuseServerConfig): ReuseRun {
  const n = requests.length;
  const full: ReusePattern = { r1: 0, u1: 0, r2: cfg.compute.model.layers };
  const out = {
    ttftMs: new Float64Array(n),
    e2eMs: new Float64Array(n),
    recomputed: new Int32Array(n),
    qualityLoss: new Float64Array(n),
    fetchMs: new Float64Array(n),
    computeMs: new Float64Array(n),
    patterns: new Array<ReusePattern>(n).fill(full),
  };
  const q = new EventQueue();
  const waiting: number[] = [];
  let head = 0;
  const running: Running[] = [];
  let kvUsed = 0;
  let busy = false;
  let endMs = 0;
  const footprint = (i: number) => requests[i]!.context + cfg.question + cfg.outputTokens;

  const plan = (load: number, waitedMs: number): { pattern: ReusePattern; loss: number } => {
    const p = cfg.policy;
    if (p.kind === 'fixed') return { pattern: p.pattern, loss: p.qualityLoss };
    const choice = choosePlan(p.frontier, {
      maxQualityLoss: p.maxQualityLoss,
      ...(p.qualityMetric ? { qualityMetric: p.qualityMetric } : {}),
      load,
      ...(p.ignoreWait ? {} : { waitedMs }),
      ...(p.latencyBudgetMs === undefined ? {} : { latencyBudgetMs: p.latencyBudgetMs }),
    });
    return choice ? { pattern: choice.point.pattern, loss: qualityLoss(choice.point, p.qualityMetric) } : { pattern: full, loss: 0 };
  };

  const step = (now: number): void => {
    busy = false;
    const next = waiting[head];
    if (next !== undefined && (running.length === 0 || kvUsed + footprint(next) <= cfg.kvCapacityTokens)) {
      head++;
      const { pattern, loss } = plan(waiting.length - head, now - requests[next]!.arrivalMs);
      const c = planCost(cfg.compute, cfg.link, pattern, requests[next]!.context, cfg.question);
      out.recomputed[next] = c.recomputed;
      out.patterns[next] = pattern;
      out.qualityLoss[next] = loss;
      out.fetchMs[next] = c.fetchMs;
      out.computeMs[next] = c.computeMs;
      kvUsed += footprint(next);
      busy = true;
      q.after(
        c.fetchMs + c.computeMs,
        call((t) => {
          out.ttftMs[next] = t - requests[next]!.arrivalMs;
          running.push({ i: next, context: requests[next]!.context + cfg.question, left: cfg.outputTokens - 1 });
          finish(t);
          step(t);
        }),
      );
      return;
    }
    if (running.length === 0) return;
    let ctx = 0;
    for (const r of running) ctx += r.context;
    busy = true;
    q.after(
      cfg.compute.decodeMs(running.length, ctx),
      call((t) => {
        for (const r of running) {
          r.context++;
          r.left--;
        }
        finish(t);
        step(t);
      }),
    );
  };

  // Sequences with every token out leave and free their KV.
  const finish = (t: number): void => {
    for (let k = running.length - 1; k >= 0; k--) {
      const r = running[k]!;
      if (r.left > 0) continue;
      out.e2eMs[r.i] = t - requests[r.i]!.arrivalMs;
      kvUsed -= footprint(r.i);
      running.splice(k, 1);
      endMs = Math.max(endMs, t);
    }
  };

  requests.forEach((r, i) =>
    q.at(
      r.arrivalMs,
      call((t) => {
        waiting.push(i);
        if (!busy) step(t);
      }),
    ),
  );
  q.run();
  return { ...out, endMs };
}
