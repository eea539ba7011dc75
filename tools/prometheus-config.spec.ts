import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Parsed YAML: shapes are checked by the assertions themselves.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const read = (f: string): Json => parse(readFileSync(join(root, f), 'utf8'));
const targets = (config: Json): string[] =>
  config.scrape_configs.flatMap((j: Json) => (j.static_configs ?? []).flatMap((s: Json) => s.targets as string[])).sort();

describe('Prometheus scrape configs (deploy/prometheus)', () => {
  /** service → METRICS_PORT in docker-compose.yml. */
  const composePorts = Object.entries(read('docker-compose.yml').services as Record<string, Json>)
    .filter(([, s]) => s.environment?.METRICS_PORT)
    .map(([name, s]) => `${name}:${s.environment.METRICS_PORT}`)
    .sort();

  it('compose.yml scrapes every compose service on its ops port', () => {
    expect(composePorts).toHaveLength(5);
    expect(targets(read('deploy/prometheus/compose.yml'))).toEqual(composePorts);
  });

  it('local.yml scrapes the ops ports npm start prefers, the same numbers as compose', () => {
    const start = readFileSync(join(root, 'scripts/start.mjs'), 'utf8');
    const local = targets(read('deploy/prometheus/local.yml'));
    expect(local.map((t) => t.split(':')[1]).sort()).toEqual(composePorts.map((t) => t.split(':')[1]).sort());
    for (const t of local) expect(start).toContain(`ops(${t.split(':')[1]})`);
  });

  it('kubernetes.yml keeps the pods the manifests annotate, on the annotated port and path', () => {
    const config = read('deploy/prometheus/kubernetes.yml');
    const relabel = JSON.stringify(config.scrape_configs[0].relabel_configs);
    for (const key of ['prometheus_io_scrape', 'prometheus_io_port', 'prometheus_io_path'])
      expect(relabel).toContain(`__meta_kubernetes_pod_annotation_${key}`);
    for (const overlay of ['local', 'gpu']) {
      const dir = join(root, 'deploy/k8s', overlay);
      const pods = readdirSync(dir)
        .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJSON() as Json))
        .filter((o) => ['Deployment', 'StatefulSet'].includes(o.kind) && o.metadata.name !== 'nats');
      expect(pods.map((o) => o.metadata.name).sort()).toEqual(['gateway', 'node-manager', 'profiler', 'scheduler']);
      for (const o of pods) {
        const a = o.spec.template.metadata.annotations ?? {};
        const ports = o.spec.template.spec.containers.flatMap((c: Json) =>
          (c.env ?? []).filter((e: Json) => e.name === 'METRICS_PORT').map((e: Json) => e.value),
        );
        expect([o.metadata.name, a['prometheus.io/scrape'], a['prometheus.io/path'], [a['prometheus.io/port']]]).toEqual([
          o.metadata.name,
          'true',
          '/metrics',
          ports,
        ]);
      }
    }
  });
});
