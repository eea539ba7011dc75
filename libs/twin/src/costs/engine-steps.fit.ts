import { DEFAULT_SIM_COST, type ForwardStep, type SimCostModel } from '@mnemo/engine';
import { median, nonNegativeLeastSquares } from '@mnemo/kv-core';

/** How well one call kind's fitted line prices the steps it was fitted on. */
export interface StepFitQuality {
  readonly steps: number;
  /** Median over steps of |priced − measured| ÷ measured. */
  readonly median_abs_error: number | null;
  /** Σ priced ÷ Σ measured − 1: whether the fit prices the run's total engine time (0: exactly). */
  readonly total_error: number | null;
}

/** The compute port fitted to an engine's measured steps, and how well it prices them. */
export interface EngineStepFit {
  readonly cost: SimCostModel;
  readonly prefill: StepFitQuality;
  readonly decode: StepFitQuality;
}

const prefillRow = (s: ForwardStep) => [1, s.tokens, s.attendedTokens / 1000];
const decodeRow = (s: ForwardStep) => [1, s.seqs, s.contextTokens / 1000];

function quality(steps: readonly ForwardStep[], price: (s: ForwardStep) => number): StepFitQuality {
  const measured = steps.reduce((a, s) => a + s.ms, 0);
  const priced = steps.reduce((a, s) => a + price(s), 0);
  return {
    steps: steps.length,
    median_abs_error: median(steps.filter((s) => s.ms > 0).map((s) => Math.abs(price(s) - s.ms) / s.ms)),
    total_error: measured > 0 ? priced / measured - 1 : null,
  };
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

/**
 * The sim engine's cost model (the twin's compute port, simCostCompute) fitted by least squares
 * with non-negative terms to an engine's forward steps as its nodes measured them in a live run:
 * a prefill as base + per token + per token of attended context, a decode step as base + per
 * sequence + per token of context. Fitted on the steps as they ran, contention and all, so it
 * prices the engine at that run's concurrency — and only there. Restores are priced by the
 * twin's link ports, so no PCIe term (restorePerChunkMs 0). A kind with no steps keeps the sim
 * engine's defaults, and says so by its zero step count.
 */
export function fitEngineSteps(steps: readonly ForwardStep[]): EngineStepFit {
  const ok = steps.filter((s) => Number.isFinite(s.ms) && s.ms >= 0 && s.seqs > 0);
  const prefills = ok.filter((s) => s.kind === 'prefill');
  const decodes = ok.filter((s) => s.kind === 'decode');
  const fit = (xs: readonly ForwardStep[], row: (s: ForwardStep) => number[]) =>
    xs.length === 0
      ? null
      : nonNegativeLeastSquares(
          xs.map(row),
          xs.map((s) => s.ms),
        );
  const p = fit(prefills, prefillRow);
  const d = fit(decodes, decodeRow);
  const cost: SimCostModel = {
    prefillBaseMs: p ? p[0]! : DEFAULT_SIM_COST.prefillBaseMs,
    prefillPerTokenMs: p ? p[1]! : DEFAULT_SIM_COST.prefillPerTokenMs,
    prefillPerKContextMs: p ? p[2]! : 0,
    decodeBaseMs: d ? d[0]! : DEFAULT_SIM_COST.decodeBaseMs,
    decodePerSeqMs: d ? d[1]! : DEFAULT_SIM_COST.decodePerSeqMs,
    decodePerKContextMs: d ? d[2]! : DEFAULT_SIM_COST.decodePerKContextMs,
    restorePerChunkMs: 0,
  };
  return {
    cost,
    prefill: quality(prefills, (s) => (p ? dot(p, prefillRow(s)) : 0)),
    decode: quality(decodes, (s) => (d ? dot(d, decodeRow(s)) : 0)),
  };
}
