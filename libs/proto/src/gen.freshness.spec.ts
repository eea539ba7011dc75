import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const protoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? listFiles(p) : [p];
  });
}

function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(listFiles(dir).map((f) => [relative(dir, f), readFileSync(f, 'utf8')]));
}

// The committed src/gen must be exactly what `npm run proto:gen` produces from the .proto files now.
describe('generated protobuf code', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'mnemo-proto-gen-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('is up to date with the .proto files (run `npm run proto:gen` if this fails)', () => {
    execFileSync(process.execPath, [join(protoRoot, 'scripts/generate.mjs'), tmp], { stdio: 'pipe' });
    const fresh = snapshot(join(tmp, 'src/gen'));
    const committed = snapshot(join(protoRoot, 'src/gen'));
    expect(Object.keys(committed).sort()).toEqual(Object.keys(fresh).sort());
    for (const [file, text] of Object.entries(fresh)) expect({ file, text: committed[file] }).toEqual({ file, text });
  }, 30_000);
});
