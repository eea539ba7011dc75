// `node deploy/k8s/generate.mjs` writes deploy/k8s/<overlay>/*.yaml for every overlay;
// `--check` only compares (exit 1 on a difference), `--image NAME` sets the image (default
// mnemo:local, the one docker-compose.yml builds), `--out DIR` writes under DIR instead,
// `--overlay NAME` only that overlay, `--ssd-hosts a,b` pins the local SSD volumes to those
// Kubernetes nodes (`kubectl get nodes`) instead of the overlay's (render.mjs overlayFor).
// No cluster, kustomize or helm is needed: the output is plain YAML for `kubectl apply -f`.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadTestkit } from '../../scripts/testkit.mjs';

// lib/nats.mjs reads the NATS users' permissions from @mnemo/testkit: compile it before loading lib/.
await loadTestkit();
const { DEFAULT_IMAGE, OVERLAYS, render } = await import('./lib/render.mjs');

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    check: { type: 'boolean', default: false },
    image: { type: 'string', default: DEFAULT_IMAGE },
    out: { type: 'string', default: here },
    overlay: { type: 'string' },
    'ssd-hosts': { type: 'string' },
  },
});

let stale = 0;
const ssdHosts = values['ssd-hosts']
  ?.split(',')
  .map((h) => h.trim())
  .filter(Boolean);
for (const overlay of values.overlay ? [values.overlay] : Object.keys(OVERLAYS)) {
  const dir = join(values.out, overlay);
  const files = render(overlay, values.image, ssdHosts);
  if (values.check) {
    const present = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.yaml')) : [];
    for (const f of new Set([...present, ...files.keys()])) {
      const want = files.get(f);
      const have = existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined;
      if (want !== have) {
        stale++;
        console.error(`${overlay}/${f}: ${want === undefined ? 'not generated any more' : have === undefined ? 'missing' : 'differs'}`);
      }
    }
    continue;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of files) writeFileSync(join(dir, f), text);
  console.log(`${overlay}: ${[...files.keys()].join(', ')}`);
}
if (stale > 0) {
  console.error(`${stale} manifest file(s) out of date: run \`node deploy/k8s/generate.mjs\``);
  process.exit(1);
}
