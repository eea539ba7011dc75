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
export interface TempDir {
  readonly path: string;
  file(name: string): string;
  remove(): void;
}

export function tempDir(prefix = 'mnemo-pool-'): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, file: (name) => join(path, name), remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A fresh temp dir for each test of the enclosing describe, removed after it; the handle always names the current one. */
export function tempDirPerTest(): TempDir {
  let current: TempDir | undefined;
  beforeEach(() => {
    current = tempDir();
  });
  afterEach(() => current?.remove());
  const dir = (): TempDir => {
    if (!current) throw new Error('tempDirPerTest: used outside a test');
    return current;
  };
  return {
    get path() {
      return dir().path;
    },
    file: (name) => dir().file(name),
    remove: () => dir().remove(),
  };
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
