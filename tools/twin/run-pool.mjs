// Independent twin runs on worker threads. A run is a pure function of its inputs (seeded), so
// running several at once changes only the wall time; on two cores two runs take about the time
// of one. Each worker imports the module once and keeps what it caches (the drawn sessions).
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Threads to use: TWIN_WORKERS if set, else 2 (this machine's cores), never more than the cores. */
export const poolWorkers = () => Math.max(1, Math.min(Number(process.env.TWIN_WORKERS ?? 2) || 1, availableParallelism()));

/**
 * Calls `module`'s export `fn(task, emit)` for every task, `workers` at a time, taking tasks in
 * `order` (indices; the longest first balances the threads); resolves the results in task order.
 * `emit(event)` inside a task reaches `onEvent(event)` here; `onDone(i, result)` hears each task end.
 * With one worker everything runs in this thread.
 */
export async function runPool({
  module,
  fn,
  tasks,
  workers = poolWorkers(),
  order = tasks.map((_, i) => i),
  onEvent = () => {},
  onDone = () => {},
}) {
  const results = new Array(tasks.length);
  if (workers <= 1 || tasks.length <= 1) {
    const f = (await import(module))[fn];
    for (const i of order) onDone(i, (results[i] = await f(tasks[i], onEvent)));
    return results;
  }
  const queue = [...order];
  const thread = () =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL('./run-pool.worker.mjs', import.meta.url), { workerData: { module, fn } });
      const next = () => {
        if (!queue.length) return void w.terminate().then(resolve, reject);
        const i = queue.shift();
        w.postMessage({ i, task: tasks[i] });
      };
      w.on('message', (m) => {
        if (m.ready) return next();
        if (m.event !== undefined) return onEvent(m.event);
        onDone(m.i, (results[m.i] = m.result));
        next();
      });
      w.on('error', reject);
      w.on('exit', (code) => (code === 0 || queue.length === 0 ? undefined : reject(new Error(`twin worker exited with ${code}`))));
    });
  await Promise.all(Array.from({ length: Math.min(workers, tasks.length) }, thread));
  return results;
}
