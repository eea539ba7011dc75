import { ErrorCode, MnemoError, planReuse, type ReusePattern } from '@mnemo/kv-core';
import { ForwardPass } from './forward.pass.js';
import { HookClock } from './layer-hooks.js';
import type { ModelRuntime, SeqStepResult } from './model.runtime.js';

type Maybe<T> = T | Promise<T>;

/** DroidSpeak §4.5 `partial_prefill(recompute_config, context)` for one sequence. */
export interface PartialPrefillRequest {
  readonly seqId: string;
  readonly tokens: readonly number[];
  readonly pattern: ReusePattern;
  /** `fetch_kv`: the base model's KV of one reused layer for every token, `[K|V][token][kv_head][head_dim]`. */
  readonly fetchKv: (layer: number) => Maybe<Float32Array>;
  /** `fetch_e`: the base model's hidden state entering `layer` for every token, `[token][d_model]`. */
  readonly fetchE?: (layer: number) => Maybe<Float32Array>;
  readonly captureLayers?: readonly number[];
  /** 'all' needs the last layer recomputed (r2 = L and u1 < L or r1 = L). */
  readonly logits?: 'last' | 'all';
}

/**
 * Runs a prefill of `tokens` into the (empty) sequence under a reuse pattern: computed
 * layers write the model's own KV; reused layers take fetched KV; at the transition
 * layer u1 the residual stream restarts from the fetched E cache; reused layers with
 * nothing recomputed above them carry only the last token, as a query over the reused
 * KV, up to the head. Fetches for layer l+1 start while layer l computes.
 */
export async function runPartialPrefill<T>(rt: ModelRuntime<T>, req: PartialPrefillRequest): Promise<SeqStepResult> {
  const L = rt.config.layers;
  const plan = planReuse(req.pattern, L);
  const N = req.tokens.length;
  const { seqId } = req;
  if (N === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'partial prefill of no tokens');
  if (rt.cache.length(seqId) !== 0)
    throw new MnemoError(ErrorCode.Conflict, `partial prefill needs an empty sequence; ${seqId} has ${rt.cache.length(seqId)} tokens`);
  if (N > rt.config.maxContext) throw new MnemoError(ErrorCode.PromptTooLong, `${N} tokens exceed the context of ${rt.config.maxContext}`);
  rt.checkTokens(req.tokens);
  if (plan.eLayer !== null && !req.fetchE)
    throw new MnemoError(ErrorCode.InvalidRequest, `pattern needs the E cache at layer ${plan.eLayer} but no fetchE was given`);
  const tail = plan.actions.indexOf('reuse-query');
  if (req.logits === 'all' && tail >= 0)
    throw new MnemoError(ErrorCode.InvalidRequest, `logits for every row need the last layer recomputed; layers from ${tail} are reused`);
  // Hidden state for all rows exists entering layer l iff l is 0, follows a computed layer, or is the transition.
  const hiddenAt = (l: number): boolean => l === 0 || plan.actions[l - 1] === 'compute' || l === plan.eLayer;
  for (const l of req.captureLayers ?? []) {
    if (!Number.isInteger(l) || l < 0 || l > L || !hiddenAt(l)) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `the E cache at layer ${l} is not computed under pattern (${req.pattern.r1}, ${req.pattern.u1}, ${req.pattern.r2})`,
      );
    }
  }
  const capture = new Set(req.captureLayers ?? []);

  const t0 = performance.now();
  const [slots] = rt.cache.appendAll([{ seqId, tokens: N }]);
  rt.enter([seqId]);
  const full = new ForwardPass(rt.backend, rt.model, rt.cache, [{ seqId, rows: N, contextLen: N, slots }]);
  let query: ForwardPass<T> | null = null;
  let eData: Float32Array | null = null;
  const range = (l: number) => ({ layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: N });
  const clock = new HookClock(
    {
      beforeLayer: async (l) => {
        const jobs: Array<Promise<void>> = [];
        if (plan.actions[l] !== 'compute') jobs.push(Promise.resolve(req.fetchKv(l)).then((kv) => rt.cache.import(seqId, range(l), kv)));
        if (l === plan.eLayer) jobs.push(Promise.resolve(req.fetchE!(l)).then((e) => void (eData = e)));
        await Promise.all(jobs);
      },
    },
    rt.stats,
  );
  const captured = new Map<number, Float32Array>();
  try {
    const first = clock.startBefore(0);
    full.embed(Int32Array.from(req.tokens));
    await clock.wait(first);
    if (capture.has(0)) captured.set(0, full.readHidden());
    for (let l = 0; l < L; l++) {
      const next = l + 1 < L ? clock.startBefore(l + 1) : undefined;
      const action = plan.actions[l];
      if (action === 'compute') await full.runLayer(l);
      else if (action === 'reuse-query') {
        if (!query) {
          query = new ForwardPass(rt.backend, rt.model, rt.cache, [{ seqId, rows: 1, contextLen: N }]);
          full.gatherHiddenInto(query, Int32Array.of(N - 1));
        }
        await query.runLayer(l);
      }
      await clock.wait(next);
      if (l + 1 === plan.eLayer) {
        if (!eData || (eData as Float32Array).length !== N * rt.config.dModel) {
          throw new MnemoError(ErrorCode.InvalidRequest, `E cache at layer ${plan.eLayer} must hold ${N}×${rt.config.dModel} floats`);
        }
        full.writeHidden(eData);
      }
      if (capture.has(l + 1)) captured.set(l + 1, full.readHidden());
    }
    const head = query ?? full;
    const rows = req.logits === 'all' ? Int32Array.from({ length: N }, (_, i) => i) : Int32Array.of(head.numRows - 1);
    return { seqId, logits: await head.logits(rows), eCache: captured };
  } finally {
    full.dispose();
    query?.dispose();
    rt.leave([seqId]);
    rt.stats.steps++;
    rt.stats.prefillTokens += N;
    rt.stats.forwardMs += performance.now() - t0;
  }
}
