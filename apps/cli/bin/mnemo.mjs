#!/usr/bin/env node
// The installed `mnemo` command: src/main.ts, compiled into dist/ by `npx tsc -b` (npm start and npm test build it).
// On a fresh clone (`npm install` only), the first run compiles this project, so `npx mnemo up` works there too.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('mnemo: compiling the command (npx tsc -b apps/cli)…\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', fileURLToPath(new URL('../tsconfig.json', import.meta.url))], { stdio: 'inherit' });
}
await import(main.href);
