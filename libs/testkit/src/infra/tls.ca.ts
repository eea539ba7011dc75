import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A private certificate authority and the certificates it signs, made with the `openssl` command
 * (Node cannot issue certificates itself). `npm start` makes one per run for NATS TLS and node ↔
 * node gRPC TLS; integration tests make their own; in Kubernetes the operator brings a CA (or
 * runs this, `node scripts/tls.mjs DIR`, and stores the files as Secrets).
 */

function openssl(args: string[], cwd?: string): string {
  try {
    return execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT')
      throw new Error('openssl is not installed: `sudo apt-get install -y openssl` (it makes the private CA for TLS)');
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() ?? err.message}`);
  }
}

/** True when the `openssl` command runs. */
export function hasOpenssl(): boolean {
  try {
    openssl(['version']);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `dir/ca.pem` + `dir/ca.key` (an EC P-256 CA valid `days`), then per entry of `certs`
 * `dir/<name>.pem` + `dir/<name>.key`, signed by it, for the DNS names and IPs given (the first
 * is the common name). Each certificate serves as server and client (mutual TLS between nodes).
 * Keys are written 0600. `certs`: name → subject alternative names ('127.0.0.1', 'localhost',
 * 'nats.mnemo.svc', …).
 */
export function makePrivateCa(
  dir: string,
  certs: Record<string, string[]>,
  opts: { days?: number } = {},
): { ca: string; certs: Record<string, { cert: string; key: string }> } {
  const days = String(opts.days ?? 825);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', caKey]);
  chmodSync(caKey, 0o600);
  openssl(['req', '-x509', '-new', '-key', caKey, '-sha256', '-days', days, '-subj', '/CN=mnemo private CA', '-out', ca]);
  const out: Record<string, { cert: string; key: string }> = {};
  for (const [name, sans] of Object.entries(certs)) {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new RangeError(`certificate name ${JSON.stringify(name)}: [A-Za-z0-9_.-]+`);
    const key = join(dir, `${name}.key`);
    const csr = join(dir, `${name}.csr`);
    const cert = join(dir, `${name}.pem`);
    const ext = join(dir, `${name}.ext`);
    const alt = sans.map((s) => (/^[0-9.]+$|:/.test(s) ? `IP:${s}` : `DNS:${s}`)).join(',');
    writeFileSync(ext, `subjectAltName=${alt}\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n`);
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
    chmodSync(key, 0o600);
    openssl(['req', '-new', '-key', key, '-subj', `/CN=${sans[0] ?? name}`, '-out', csr]);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca,
      '-CAkey',
      caKey,
      '-CAcreateserial',
      '-days',
      days,
      '-sha256',
      '-extfile',
      ext,
      '-out',
      cert,
    ]);
    rmSync(csr);
    rmSync(ext);
    out[name] = { cert, key };
  }
  return { ca, certs: out };
}
