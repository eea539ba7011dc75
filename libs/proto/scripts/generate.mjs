// Generates libs/proto/src/gen from the .proto files with buf + protoc-gen-es (local npm packages,
// nothing fetched). Usage: node libs/proto/scripts/generate.mjs [baseDir]
// Output goes to <baseDir>/src/gen (baseDir defaults to libs/proto); the staleness test passes a
// temp dir and compares its src/gen with the committed one.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const protoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const buf = resolve(protoRoot, '../../node_modules/.bin/buf');
const base = resolve(process.argv[2] ?? protoRoot);

if (!existsSync(buf)) {
  console.error(`buf not found at ${buf}: run npm install at the repo root`);
  process.exit(1);
}
execFileSync(buf, ['generate', '--template', 'buf.gen.yaml', '--output', base], { cwd: protoRoot, stdio: 'inherit' });
