#!/usr/bin/env node
// The installed `mnemo` command: src/main.ts, compiled into dist/ by `npx tsc -b` (npm start and npm test build it).
// On a fresh clone (`npm install` only), the first run compiles this project, so `npx mnemo up` works there too.
import { existsSync } from 'node:fs';
import { compileProject } from '../../../scripts/tsc-project.mjs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('mnemo: compiling the command (npx tsc -b apps/cli)…\n');
  compileProject(new URL('../tsconfig.json', import.meta.url));
}
await import(main.href);
