// Independent twin runs on worker threads. A run is a pure function of its inputs (seeded), so
// running several at once changes only the wall time; on two cores two runs take about the time
// of one. Each worker imports the task's module once and keeps what it caches (the drawn sessions).
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Threads to use: TWIN_WORKERS if set, else 2 (this machine's cores), never more than the cores. */
export const poolWorkers = (): number => Math.max(1, Math.min(Number(process.env.TWIN_WORKERS ?? 2) || 1, availableParallelism()));

/** A task's function as a module exports it: `emit(event)` reaches the caller's `onEvent`, from a thread too. */
export type PoolTaskFn<T, R, E = unknown> = (task: T, emit: (event: E) => void) => R | Promise<R>;

export interface RunPoolOptions<T, R, E = unknown> {
  /**
   * The URL of a module exporting `fn`: functions cannot be sent to a thread, so each thread imports
   * it (a command-line module that binds the library's function to its ports).
   */
  readonly module: string;
  readonly fn: string;
  readonly tasks: readonly T[];
  readonly workers?: number;
  /** Task indices in the order taken: the longest first balances the threads. */
  readonly order?: readonly number[];
  readonly onEvent?: (event: E) => void;
  readonly onDone?: (i: number, result: R) => void;
}

/** The thread's side of the messages: `ready`, then an event or a result per message. */
type FromThread<R, E> = { readonly ready: true } | { readonly event: E } | { readonly i: number; readonly result: R };

// The thread's entry as a data: URL, not a file: the library runs from dist/ (the command line) or
// from src/ (jest), and a file beside this one would exist in only one of them.
const THREAD_SOURCE = `
import { parentPort, workerData } from 'node:worker_threads';
const f = (await import(workerData.module))[workerData.fn];
parentPort.on('message', async ({ i, task }) => {
  const result = await f(task, (event) => parentPort.postMessage({ event }));
  parentPort.postMessage({ i, result });
});
parentPort.postMessage({ ready: true });
`;
const THREAD_URL = new URL(`data:text/javascript,${encodeURIComponent(THREAD_SOURCE)}`);

/**
 * Calls `module`'s export `fn(task, emit)` for every task, `workers` at a time, taking tasks in
 * `order`; resolves the results in task order; `onDone(i, result)` hears each task end. With one
 * worker everything runs in this thread.
 */
export async function runPool<T, R, E = unknown>({
  module,
  fn,
  tasks,
  workers = poolWorkers(),
  order = tasks.map((_, i) => i),
  onEvent = () => {},
  onDone = () => {},
}: RunPoolOptions<T, R, E>): Promise<R[]> {
  const results = new Array<R>(tasks.length);
  if (workers <= 1 || tasks.length <= 1) {
    const f = ((await import(module)) as Record<string, PoolTaskFn<T, R, E>>)[fn];
    for (const i of order) onDone(i, (results[i] = await f(tasks[i], onEvent)));
    return results;
  }
  const queue = [...order];
  const thread = () =>
    new Promise<void>((resolve, reject) => {
      const w = new Worker(THREAD_URL, { workerData: { module, fn } });
      const next = () => {
        const i = queue.shift();
        if (i === undefined) return void w.terminate().then(() => resolve(), reject);
        w.postMessage({ i, task: tasks[i] });
      };
      w.on('message', (m: FromThread<R, E>) => {
        if ('ready' in m) return next();
        if ('event' in m) return onEvent(m.event);
        onDone(m.i, (results[m.i] = m.result));
        next();
      });
      w.on('error', reject);
      w.on('exit', (code) => (code === 0 || queue.length === 0 ? undefined : reject(new Error(`twin worker exited with ${code}`))));
    });
  await Promise.all(Array.from({ length: Math.min(workers, tasks.length) }, thread));
  return results;
}
