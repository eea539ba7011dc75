import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPeerTls } from './peer-tls.settings.js';

describe('loadPeerTls (NODE_GRPC_TLS_*)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'peer-tls-'));
  const pem = join(dir, 'x.pem');
  const junk = join(dir, 'junk.txt');
  writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  writeFileSync(junk, 'hello');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each<[string, Record<string, string>, RegExp | null, boolean]>([
    ['none: plaintext', {}, null, false],
    ['all three PEM files', { NODE_GRPC_TLS_CA: pem, NODE_GRPC_TLS_CERT: pem, NODE_GRPC_TLS_KEY: pem }, null, true],
    ['only some', { NODE_GRPC_TLS_CA: pem }, /needs all of NODE_GRPC_TLS_CA, NODE_GRPC_TLS_CERT, NODE_GRPC_TLS_KEY/, false],
    [
      'a missing file',
      { NODE_GRPC_TLS_CA: pem, NODE_GRPC_TLS_CERT: join(dir, 'nope'), NODE_GRPC_TLS_KEY: pem },
      /cannot read \(ENOENT\)/,
      false,
    ],
    ['a file that is no PEM', { NODE_GRPC_TLS_CA: pem, NODE_GRPC_TLS_CERT: pem, NODE_GRPC_TLS_KEY: junk }, /not a PEM file/, false],
  ])('%s', (_name, env, problem, tls) => {
    const r = loadPeerTls(env);
    if (problem) expect(r.problems.join('\n')).toMatch(problem);
    else expect(r.problems).toEqual([]);
    expect(r.tls !== undefined).toBe(tls);
  });
});
