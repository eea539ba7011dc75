import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = dirname(fileURLToPath(import.meta.url));

/**
 * The node-manager's rooms (its top-level folders and files) on floors: a room imports only rooms on
 * lower floors, so no import runs back up and no two rooms import each other. docs/architecture.md
 * ("Inside the node-manager") explains the order; a new folder takes a floor here.
 */
const FLOORS: Readonly<Record<string, number>> = {
  config: 1,
  shared: 1,
  tokenizers: 1,
  engine: 2,
  'kv-store': 2,
  'kv-events': 2,
  'kv-metrics': 3,
  why: 2,
  peers: 3,
  droidspeak: 3,
  interop: 3,
  batching: 4,
  chunks: 4,
  prefetch: 4,
  elastic: 5,
  heartbeat: 5,
  inference: 6,
  bootstrap: 7,
  'main.ts': 8,
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

const roomOf = (file: string): string => relative(SRC, file).split(sep)[0]!;

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+'(\.{1,2}\/[^']+)'/g;

function arrows(): Array<{ from: string; to: string; file: string }> {
  return sources(SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => ({
      from: roomOf(file),
      to: roomOf(resolve(dirname(file), m[1]!)),
      file: relative(SRC, file),
    })),
  );
}

describe('node-manager floors', () => {
  it('places every room on a floor', () => {
    const rooms = new Set(sources(SRC).map(roomOf));
    expect([...rooms].filter((r) => FLOORS[r] === undefined)).toEqual([]);
  });

  it('imports only downwards', () => {
    const up = arrows()
      .filter((a) => a.from !== a.to && !(FLOORS[a.to]! < FLOORS[a.from]!))
      .map((a) => `${a.file} -> ${a.to}`);
    expect(up).toEqual([]);
  });
});
