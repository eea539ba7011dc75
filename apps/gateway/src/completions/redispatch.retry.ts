import { setTimeout as delay } from 'node:timers/promises';
import { isMnemoError, redispatchDelay, type RedispatchBackoff } from '@mnemo/kv-core';
import type { Placement } from '../nats/scheduler.client.js';

/**
 * Schedules a continuation, waiting out "no node" (kv-core's redispatchDelay says when and how
 * long) until the deadline or the client leaves; any other error, or the last one, is thrown.
 */
export async function redispatchUntilPlaced(
  schedule: () => Promise<Placement>,
  deadlineUnixMs: number,
  signal: AbortSignal,
  onRetry: (code: string, delayMs: number, retries: number) => void,
  backoff?: RedispatchBackoff,
): Promise<Placement> {
  for (let retries = 0; ; retries++) {
    try {
      return await schedule();
    } catch (e) {
      if (!isMnemoError(e) || signal.aborted) throw e;
      const delay = redispatchDelay(e.code, retries, deadlineUnixMs - Date.now(), backoff);
      if (delay === null) throw e;
      onRetry(e.code, delay, retries);
      if (!(await sleep(delay, signal))) throw e;
    }
  }
}

/** False when `signal` aborted first. */
async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
