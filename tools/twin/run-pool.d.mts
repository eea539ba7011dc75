export function poolWorkers(): number;
export function runPool<T, R>(o: {
  module: string;
  fn: string;
  tasks: T[];
  workers?: number;
  order?: number[];
  onEvent?: (e: unknown) => void;
  onDone?: (i: number, r: R) => void;
}): Promise<R[]>;
