import { openSync, writeSync } from 'node:fs';
import type { ForwardStep } from '@mnemo/engine';
import { ConfigError } from '@mnemo/service-kit';

/**
 * Appends each forward step of the reference engine to `path` as one JSON line (NODE_STEP_TRACE):
 * what the twin's engine calibration fits its compute port on, measured in the node's own process
 * at whatever concurrency it ran. The file is opened at start-up, so a path the node cannot write
 * is a configuration error, not a lost trace.
 */
export function stepTraceWriter(path: string): (step: ForwardStep) => void {
  let fd: number;
  try {
    fd = openSync(path, 'a');
  } catch (e) {
    throw new ConfigError([`NODE_STEP_TRACE=${path}: ${(e as Error).message}`]);
  }
  let failed = false;
  return (s) => {
    if (failed) return;
    try {
      writeSync(fd, JSON.stringify({ ...s, ms: Math.round(s.ms * 1000) / 1000 }) + '\n');
    } catch {
      // A full disk stops the trace, never a step.
      failed = true;
    }
  };
}
