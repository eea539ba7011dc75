import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { NativeErrorCode } from './native.error.js';
import { tempDirPerTest } from './testing/pool.fixtures.js';

// close() and the environment clean-up hook are per Node environment, so they are tested in
// worker threads: closing the addon in jest's own environment would break the other specs.
const addonPath = fileURLToPath(new URL('../build/Release/mnemo_native.node', import.meta.url));

/** Runs `body` (CommonJS, `addon` and `post` in scope) in a worker; resolves messages + exit code. */
function inWorker(body: string, onMessage?: (msg: unknown, worker: Worker) => void): Promise<{ messages: unknown[]; exitCode: number }> {
  const source = `
    const { parentPort } = require('node:worker_threads');
    const addon = require(${JSON.stringify(addonPath)});
    class NativeError extends Error { constructor(m, code) { super(m); this.code = code; } }
    addon.init(NativeError, 2);
    const post = (m) => parentPort.postMessage(m);
    (async () => { ${body} })().catch((e) => post({ failed: String(e && e.stack || e) }));
  `;
  return new Promise((resolve, reject) => {
    const messages: unknown[] = [];
    const worker = new Worker(source, { eval: true });
    worker.on('message', (m) => {
      messages.push(m);
      onMessage?.(m, worker);
    });
    worker.on('error', reject);
    worker.on('exit', (exitCode) => resolve({ messages, exitCode }));
  });
}

describe('native addon lifecycle', () => {
  it('close() settles in-flight batches, then refuses new work with code closed', async () => {
    const { messages, exitCode } = await inWorker(`
      const bytes = 16 << 20;
      const src = new ArrayBuffer(bytes), dst = new ArrayBuffer(bytes);
      new Uint8Array(src).fill(9);
      const inFlight = addon.batchCopy([src, dst], new Float64Array([0, 0, 1, 0, bytes]));
      addon.close();
      await inFlight;
      const copied = new Uint8Array(dst)[bytes - 1];
      const after = await addon.batchCopy([src, dst], new Float64Array([0, 0, 1, 0, 1])).then(() => 'resolved', (e) => e.code);
      let alloc;
      try { addon.allocHostBuffer(64, 64); alloc = 'allocated'; } catch (e) { alloc = e.code; }
      addon.close();
      post({ copied, after, alloc, closed: addon.stats().closed });
    `);
    expect(messages).toEqual([{ copied: 9, after: NativeErrorCode.Closed, alloc: NativeErrorCode.Closed, closed: true }]);
    expect(exitCode).toBe(0);
  });

  it('an environment that exits without close() joins its threads and exits cleanly', async () => {
    const { messages, exitCode } = await inWorker(`
      const src = new ArrayBuffer(1 << 20), dst = new ArrayBuffer(1 << 20);
      await addon.batchCopy([src, dst], new Float64Array([0, 0, 1, 0, 1 << 20]));
      post('copied');
    `);
    expect(messages).toEqual(['copied']);
    expect(exitCode).toBe(0);
  });

  it('terminating environments with copies in flight never crashes the process', async () => {
    // Node frees external ArrayBuffers (allocHostBuffer) before any addon clean-up hook
    // runs; the copies must keep that memory alive. Repeated because it is a race.
    for (let round = 0; round < 10; round++) {
      const { exitCode } = await inWorker(
        `
        const bytes = 8 << 20;
        const bufs = Array.from({ length: 8 }, (_, i) => (i % 2 ? addon.allocHostBuffer(bytes, 4096) : new ArrayBuffer(bytes)));
        for (let i = 0; i < 4; i++) addon.batchCopy([bufs[2 * i], bufs[2 * i + 1]], new Float64Array([0, 0, 1, 0, bytes]));
        post('started');
        // Keep the loop alive so the worker only ends by terminate(), never on its own.
        setInterval(() => {}, 1000);
        `,
        (msg, worker) => {
          if (msg === 'started') void worker.terminate();
        },
      );
      expect(exitCode).toBe(1); // terminate()'s exit code
    }
  });

  describe('pool devices', () => {
    const dir = tempDirPerTest();

    it('an environment that exits with devices open and transfers in flight exits cleanly', async () => {
      const { messages, exitCode } = await inWorker(`
        const bytes = 8 << 20;
        const host = await addon.openHostPool(bytes, -1, true, true);
        const ssd = await addon.openSsdPool(${JSON.stringify(dir.file('a.bin'))}, bytes, 0, 8, 1 << 20, false);
        const src = new Uint8Array(bytes).fill(3);
        await addon.transfer([src, host], new Float64Array([0, 0, 1, 0, bytes]), new Float64Array(0));
        // Not awaited, never closed: the clean-up hooks must drain and join.
        addon.transfer([host, ssd], new Float64Array([0, 0, 1, 0, bytes]), new Float64Array(0));
        addon.transfer([ssd, new Uint8Array(bytes)], new Float64Array([0, 0, 1, 0, bytes]), new Float64Array(0));
        post({ backend: ssd.info().backend, regions: addon.stats().poolRegions });
      `);
      expect(messages).toHaveLength(1);
      expect(exitCode).toBe(0);
    });

    it('terminating environments with SSD I/O in flight never crashes the process', async () => {
      for (let round = 0; round < 6; round++) {
        const { exitCode } = await inWorker(
          `
          const bytes = 16 << 20;
          const ssd = await addon.openSsdPool(${JSON.stringify(dir.file(`t${round}.bin`))}, bytes, 0, 4, 256 * 1024, ${round % 2 === 1});
          const host = await addon.openHostPool(bytes, -1, false, false);
          const staging = addon.allocHostBuffer(bytes, 4096);
          addon.transfer([host, ssd], new Float64Array([0, 0, 1, 0, bytes]), new Float64Array([0, 0, bytes]));
          addon.transfer([ssd, staging], new Float64Array([0, 0, 1, 0, bytes]), new Float64Array(0));
          post('started');
          setInterval(() => {}, 1000);
          `,
          (msg, worker) => {
            if (msg === 'started') void worker.terminate();
          },
        );
        expect(exitCode).toBe(1);
      }
    });
  });

  it('each environment has its own state: closing a worker leaves this one working', async () => {
    await inWorker('addon.close(); post("closed");');
    const { batchCopy } = await import('./batch.copy.js');
    const src = new Uint8Array([1, 2, 3]).buffer;
    const dst = new ArrayBuffer(3);
    await batchCopy([src, dst], new Float64Array([0, 0, 1, 0, 3]));
    expect([...new Uint8Array(dst)]).toEqual([1, 2, 3]);
  });
});
