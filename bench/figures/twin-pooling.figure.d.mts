export function figure(r: {
  curves: Record<string, Record<number, Record<string, number>>>;
  paper: Record<string, unknown>;
  pooling: { ablation_128k_ttft_vs_full: Record<string, number> };
  setup: { contexts: number[]; model: string; gpu: string };
}): Record<string, unknown>;
