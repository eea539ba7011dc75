// The README's Kubernetes steps, run as a script with fakes of kubectl, docker, kind, minikube and
// k3d on PATH that record what they were asked (the manifests are generated for real, the CA is
// made with the real openssl). Then: every Secret, Secret key and ConfigMap a pod references
// exists — created by a step or applied — so a newcomer following the README gets no pod stuck
// on a missing Secret; the image is built and loaded the way each cluster takes it.
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Parsed YAML and recorded calls: shapes are checked by the assertions themselves.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The ```sh block of README.md's "Deploy on Kubernetes" section. */
function readmeScript(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Deploy on Kubernetes'));
  const m = /```sh\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README.md: no sh block in "Deploy on Kubernetes"');
  return m[1]!;
}

// One fake for every command: appends {cmd, args} to $FAKE_LOG; kubectl answers `get nodes`,
// checks that --from-file files exist, and copies what `apply -f` names (a file or a folder).
const FAKE = `#!/usr/bin/env node
const fs = require('node:fs'), path = require('node:path');
const cmd = path.basename(process.argv[1]), args = process.argv.slice(2);
const rec = { cmd, args };
if (cmd === 'kubectl') {
  if (args[0] === 'get' && args[1] === 'nodes') process.stdout.write(process.env.FAKE_NODES);
  const f = args.indexOf('-f');
  if (args.includes('apply') && f >= 0) {
    const p = args[f + 1];
    const files = fs.statSync(p).isDirectory()
      ? fs.readdirSync(p).filter((x) => x.endsWith('.yaml')).sort().map((x) => path.join(p, x))
      : [p];
    rec.applied = files.map((x) => fs.readFileSync(x, 'utf8'));
  }
  for (const a of args)
    if (a.startsWith('--from-file=') && !fs.existsSync(a.slice(12))) {
      console.error('no such file ' + a);
      process.exit(1);
    }
}
fs.appendFileSync(process.env.FAKE_LOG, JSON.stringify(rec) + '\\n');
`;

const CLUSTERS = [
  ['kind', 'kind-control-plane'],
  ['minikube', 'minikube'],
  ['k3d', 'k3d-mnemo-server-0 k3d-mnemo-agent-0'],
] as const;

describe("README's Kubernetes steps", () => {
  it.each(CLUSTERS)('on %s: create every Secret and ConfigMap the pods read, and build and load the image', (cluster, nodes) => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-k8s-readme-'));
    try {
      const bin = join(dir, 'bin');
      execFileSync('mkdir', ['-p', bin]);
      for (const c of ['kubectl', 'docker', 'kind', 'minikube', 'k3d']) {
        writeFileSync(join(bin, c), FAKE);
        chmodSync(join(bin, c), 0o755);
      }
      const log = join(dir, 'calls.jsonl');
      const script = readmeScript().replace(/^MNEMO_CLUSTER=\S+/m, `MNEMO_CLUSTER=${cluster}`);
      writeFileSync(join(dir, 'steps.sh'), script);
      execFileSync('bash', ['-euo', 'pipefail', join(dir, 'steps.sh')], {
        cwd: root,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_LOG: log, FAKE_NODES: nodes, TMPDIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const calls: Json[] = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const kubectl = calls.filter((c) => c.cmd === 'kubectl');

      // The image: built, then loaded the way this cluster takes images.
      expect(calls.find((c) => c.cmd === 'docker' && c.args[0] === 'build')?.args).toEqual(['build', '-t', 'mnemo:local', '.']);
      const load = { kind: ['load', 'docker-image', 'mnemo:local'], minikube: ['image', 'load', 'mnemo:local'], k3d: ['image', 'import'] }[
        cluster
      ];
      expect(calls.some((c) => c.cmd === cluster && load.every((a, i) => c.args[i] === a))).toBe(true);
      // The volume directories on every machine named.
      const hosts = nodes.split(' ');
      const mkdirs = calls.filter((c) => (c.cmd === 'docker' && c.args[0] === 'exec') || (c.cmd === 'minikube' && c.args[0] === 'ssh'));
      expect(mkdirs.map((c) => (c.cmd === 'docker' ? c.args[1] : c.args[2]))).toEqual(hosts);

      // What exists: Secrets created (name → keys), objects applied.
      const secrets = new Map<string, Set<string>>();
      for (const c of kubectl.filter((x) => x.args.includes('create') && x.args.includes('secret'))) {
        expect(c.args.slice(0, 2)).toEqual(['-n', 'mnemo']);
        const name = c.args[c.args.indexOf('generic') + 1];
        const keys = c.args
          .filter((a: string) => a.startsWith('--from-literal=') || a.startsWith('--from-file='))
          .map((a: string) => (a.startsWith('--from-literal=') ? a.slice(15).split('=')[0] : basename(a.slice(12))));
        secrets.set(name, new Set(keys));
      }
      const objects: Json[] = kubectl.flatMap((c) =>
        (c.applied ?? []).flatMap((text: string) => parseAllDocuments(text).map((d) => d.toJSON())),
      );
      const configMaps = new Set(objects.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name));
      // The namespace comes before the Secrets that live in it.
      const firstApply = kubectl.findIndex((c) => c.args[0] === 'apply');
      const firstSecret = kubectl.findIndex((c) => c.args.includes('secret'));
      expect(objects.some((o) => o.kind === 'Namespace')).toBe(true);
      expect(firstApply).toBeLessThan(firstSecret);

      // Every reference of every pod template resolves.
      const pods = objects.filter((o) => o.spec?.template?.spec).map((o) => [o.metadata.name, o.spec.template.spec]);
      expect(pods.map(([n]) => n).sort()).toEqual(['gateway', 'nats', 'node-manager', 'profiler', 'scheduler']);
      const missing: string[] = [];
      for (const [name, spec] of pods) {
        for (const c of spec.containers) {
          for (const e of c.env ?? []) {
            const s = e.valueFrom?.secretKeyRef;
            if (s && !s.optional && !secrets.get(s.name)?.has(s.key)) missing.push(`${name}: Secret ${s.name} key ${s.key} (${e.name})`);
            const m = e.valueFrom?.configMapKeyRef;
            if (m && !m.optional && !configMaps.has(m.name)) missing.push(`${name}: ConfigMap ${m.name} (${e.name})`);
          }
        }
        for (const v of spec.volumes ?? []) {
          if (v.secret && !secrets.has(v.secret.secretName)) missing.push(`${name}: Secret ${v.secret.secretName} (volume)`);
          for (const it of v.secret?.items ?? [])
            if (!secrets.get(v.secret.secretName)?.has(it.key)) missing.push(`${name}: Secret ${v.secret.secretName} key ${it.key}`);
          if (v.configMap && !configMaps.has(v.configMap.name)) missing.push(`${name}: ConfigMap ${v.configMap.name}`);
        }
      }
      expect(missing).toEqual([]);
      // The volumes are pinned to this cluster's machines, not kind's defaults.
      const pvHosts = objects
        .filter((o) => o.kind === 'PersistentVolume')
        .map((o) => o.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]);
      expect(new Set(pvHosts)).toEqual(new Set(hosts.slice(0, pvHosts.length)));
      // The CA's files were real: the TLS Secret was made from certificates openssl wrote.
      const tls = kubectl.find((c) => c.args.includes('mnemo-tls'));
      const pem = tls.args.find((a: string) => a.endsWith('/ca.pem')).slice(12);
      expect(existsSync(pem) && statSync(pem).size > 0 && readFileSync(pem, 'utf8').includes('BEGIN CERTIFICATE')).toBe(true);
      expect(readdirSync(dirname(pem))).toEqual(expect.arrayContaining(['ca.key', 'node.pem', 'node.key', 'nats.pem', 'nats.key']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
