// `node scripts/tls.mjs DIR [name=dns-or-ip,… …]`: a private CA and certificates for an operator
// (Kubernetes Secrets), made with openssl by @mnemo/testkit makePrivateCa; prints the file paths as JSON.
import { loadTestkit } from './testkit.mjs';

const [dir, ...specs] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node scripts/tls.mjs DIR [name=dns-or-ip,… …]');
  process.exit(2);
}
const { makePrivateCa } = await loadTestkit();
const made = makePrivateCa(
  dir,
  Object.fromEntries(specs.map((s) => [s.split('=')[0], (s.split('=')[1] ?? '').split(',').filter(Boolean)])),
);
console.log(JSON.stringify(made, null, 2));
