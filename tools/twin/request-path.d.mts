export const PATH_SIZES: number[];
export function nodePathFit(
  samplesBySize: Record<number | string, readonly number[]>,
  exportMsPerChunk: number,
  low?: number,
): { baseMs: number; msPerKToken: number; points: Array<{ ktokens: number; ms: number }> };
export function nodeDecodePath(tpotSamples: readonly number[], loopTurnSamples: readonly number[], low?: number): number;
export function measureRequestPath(options: {
  natsUrl: string;
  nodeEnv: (nodeId: string) => Record<string, string>;
  dataDir: string;
  clusters?: number;
  reps?: number;
  maxTokens?: number;
  log?: (line: string) => void;
}): Promise<{ outside: number[]; node: Record<number, number[]>; tpot: number[] }>;
