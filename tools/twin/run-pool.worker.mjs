// One thread of run-pool.mjs: runs the tasks it is sent through `fn` of `module`, one at a time.
import { parentPort, workerData } from 'node:worker_threads';

const f = (await import(workerData.module))[workerData.fn];
parentPort.on('message', async ({ i, task }) => {
  const result = await f(task, (event) => parentPort.postMessage({ event }));
  parentPort.postMessage({ i, result });
});
parentPort.postMessage({ ready: true });
