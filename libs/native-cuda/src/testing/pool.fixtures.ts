import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Deterministic bytes (xorshift32) so failures reproduce. */
export function pattern(bytes: number, seed: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** A private folder under the OS temp dir for SSD pool files; `remove()` deletes it. */
export function tempDir(prefix = 'mnemo-pool-'): { path: string; file(name: string): string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, file: (name) => join(path, name), remove: () => rmSync(path, { recursive: true, force: true }) };
}

export type CodedError = Error & { code?: string };

export async function rejection(p: Promise<unknown>): Promise<CodedError> {
  try {
    await p;
  } catch (err) {
    return err as CodedError;
  }
  throw new Error('expected a rejection');
}

export function thrown(fn: () => unknown): CodedError {
  try {
    fn();
  } catch (err) {
    return err as CodedError;
  }
  throw new Error('expected a throw');
}
