// The memory each model of SwiftCache's max-context experiment has for KV (and activations),
// from the paper's own configurations (§5.3, Fig. 9): one master and two workers, each on a GPU
// of the same size. What a GPU has for KV is its memory at a serving system's utilization bound
// less the model's fp16 weights. Only the ratios are used: the bench scales them onto its own
// small models, so the master's and the workers' regions keep the proportions of each setting.

/** fp16 weights: 2 bytes × parameters (parameter counts from the models' public cards). */
export const WEIGHTS_GB: Readonly<Record<string, number>> = {
  'LWM-Text-1M (Llama-2-7B shape)': 2 * 6.74,
  'Qwen3-8B': 2 * 8.19,
  'Qwen3-14B': 2 * 14.77,
};

/**
 * Share of GPU memory a serving system takes. vLLM's default is 0.9, but at 0.9 Qwen3-14B's fp16
 * weights (29.5 GB) do not fit a 32 GB V100, where the paper ran it as a worker; 0.95 does, so
 * every GPU is taken at 0.95.
 */
export const UTILIZATION = 0.95;

/**
 * §5.3: "For the 96GB, 80GB, and 32GB settings, we chose Qwen3-14B and Qwen3-8B as worker models;
 * for the 24GB setting, we deployed two Qwen3-8B workers". The master is LWM-Text-1M, the model the
 * paper uses for long contexts (the text of §5.3 does not name it; it is the only one whose
 * configured context does not bound the experiment).
 */
export interface PaperSetting {
  readonly vramGb: number;
  readonly gpu: string;
  readonly master: string;
  readonly workers: readonly string[];
}

export const PAPER_SETTINGS: readonly PaperSetting[] = [
  { vramGb: 96, gpu: 'H20', master: 'LWM-Text-1M (Llama-2-7B shape)', workers: ['Qwen3-14B', 'Qwen3-8B'] },
  { vramGb: 80, gpu: 'A100', master: 'LWM-Text-1M (Llama-2-7B shape)', workers: ['Qwen3-14B', 'Qwen3-8B'] },
  { vramGb: 32, gpu: 'V100', master: 'LWM-Text-1M (Llama-2-7B shape)', workers: ['Qwen3-14B', 'Qwen3-8B'] },
  { vramGb: 24, gpu: 'L4', master: 'LWM-Text-1M (Llama-2-7B shape)', workers: ['Qwen3-8B', 'Qwen3-8B'] },
];

/** GB a model's GPU has for KV cache and activations in a setting (never below 0). */
export function kvMemoryGb(vramGb: number, model: string, utilization = UTILIZATION): number {
  const w = WEIGHTS_GB[model];
  if (w === undefined) throw new RangeError(`no weights figure for ${model}`);
  return Math.max(0, vramGb * utilization - w);
}

/** Each worker's memory as a multiple of the master's, in a setting: the ratios the bench keeps. */
export function workerShares(setting: PaperSetting, utilization = UTILIZATION): number[] {
  const master = kvMemoryGb(setting.vramGb, setting.master, utilization);
  if (master <= 0) throw new RangeError(`the master does not fit ${setting.vramGb} GB`);
  return setting.workers.map((w) => kvMemoryGb(setting.vramGb, w, utilization) / master);
}
