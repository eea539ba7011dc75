import { planReuse, type ReusePattern } from '@mnemo/kv-core';
import type { ModelSpec } from '../costs/hardware.tables.js';
import type { RooflineCompute } from '../costs/roofline.compute.js';
import { transferMs, type TransferLink } from '../costs/transfer.port.js';

/**
 * A reuse pattern profiled on a model of `fromLayers` layers carried to one of `toLayers` by the
 * fraction of layers: each boundary scaled and rounded, so recompute → reuse → recompute → reuse
 * keeps its shape, its transition layer's relative depth, and (for whole ratios such as 8 → 32)
 * exactly its fraction of recomputed layers. The quality measured on the small model is assumed
 * to carry over with it: nothing here can measure the large one.
 */
export function mapPattern(p: ReusePattern, fromLayers: number, toLayers: number): ReusePattern {
  planReuse(p, fromLayers);
  const f = (x: number) => Math.round((x * toLayers) / fromLayers);
  return { r1: f(p.r1), u1: f(p.u1), r2: f(p.r2) };
}

/** What one request's prefill costs under a plan on the target GPU, ms and bytes. */
export interface PlanCost {
  /** GPU time: the recomputed layers over the context, the question through every layer. */
  readonly computeMs: number;
  /** The base model's KV of every reused layer and the E cache at the transition layer, over the link. */
  readonly fetchMs: number;
  readonly fetchBytes: number;
  readonly recomputed: number;
}

/**
 * One request's prefill under `pattern` (in the target model's layers): `context` tokens whose
 * KV (and E cache) the base model holds on another node, then `question` tokens new to both
 * models, computed at every layer over the whole prompt. Causal attention: the context's own
 * (query, key) pairs are n(n+1)/2, the question's q·n + q(q+1)/2. The fetch is charged before
 * the compute, not overlapped (DroidSpeak §5.4 measures it so; overlapping is left as future work
 * there), and occupies the GPU's request.
 */
export function planCost(compute: RooflineCompute, link: TransferLink, pattern: ReusePattern, context: number, question: number): PlanCost {
  const model: ModelSpec = compute.model;
  const plan = planReuse(pattern, model.layers);
  const f = plan.recomputed / model.layers;
  const ctxPairs = (context * (context + 1)) / 2;
  const qPairs = question * context + (question * (question + 1)) / 2;
  const computeMs = compute.prefillMs(1, f * context + question, f * ctxPairs + qPairs);
  const kvPerLayerToken = 2 * model.kvHeads * model.headDim * model.dtypeBytes;
  const reused = model.layers - plan.recomputed;
  const eBytes = plan.eLayer === null ? 0 : context * model.hidden * model.dtypeBytes;
  const fetchBytes = context * reused * kvPerLayerToken + eBytes;
  const calls = reused + (plan.eLayer === null ? 0 : 1);
  return { computeMs, fetchMs: fetchBytes > 0 ? transferMs(link, calls, fetchBytes) : 0, fetchBytes, recomputed: plan.recomputed };
}

/** Bytes of E cache per token at a transition layer: one hidden state (twice a layer's KV on Llama-3.1-8B). */
export const eCacheBytesPerToken = (model: ModelSpec): number => model.hidden * model.dtypeBytes;
