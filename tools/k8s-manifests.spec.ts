import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { manifests, OVERLAYS, render } from '../deploy/k8s/lib/render.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Parsed YAML: shapes are checked by the assertions themselves.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
type Obj = { kind: string; metadata: { name: string }; spec?: Json; [k: string]: Json };
const committed = (overlay: string): Obj[] =>
  readdirSync(join(root, 'deploy/k8s', overlay))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(root, 'deploy/k8s', overlay, f), 'utf8')).map((d) => d.toJSON() as Obj));
const find = (objs: Obj[], kind: string, name: string): Obj => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o;
};
const containers = (objs: Obj[]) => objs.flatMap((o) => (o.spec?.template?.spec?.containers ?? []) as Json[]);

describe('Kubernetes manifests (deploy/k8s)', () => {
  const overlays = Object.keys(OVERLAYS);

  it('has the local and gpu overlays', () => {
    expect(overlays.sort()).toEqual(['gpu', 'local']);
  });

  it.each(overlays)('%s: regenerated from the typed objects, every object validates, and the committed YAML is identical', (overlay) => {
    const files = render(overlay); // throws on the first object the schema rejects
    const dir = join(root, 'deploy/k8s', overlay);
    const present = existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.yaml'))
          .sort()
      : [];
    expect(present).toEqual([...files.keys()].sort());
    for (const [file, text] of files) {
      if (readFileSync(join(dir, file), 'utf8') !== text)
        throw new Error(`deploy/k8s/${overlay}/${file} is stale: run \`node deploy/k8s/generate.mjs\``);
    }
  });

  it('a schema error fails the generation, naming the object', () => {
    const [{ objects }] = manifests('local').filter((f) => f.file === '50-gateway.yaml');
    const deployment = objects[0] as unknown as { spec: { replicas: unknown }; validate(): void };
    deployment.spec.replicas = 'two';
    expect(() => deployment.validate()).toThrow(/replicas must be integer/);
  });

  it.each(overlays)('%s: the services run the one image docker-compose.yml builds', (overlay) => {
    const image = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'))['x-service'].image;
    const images = new Set(
      containers(committed(overlay))
        .filter((c) => c.name !== 'nats')
        .map((c) => c.image),
    );
    expect([...images]).toEqual([image]);
  });

  it.each(overlays)(
    '%s: NATS is a 3-server TLS cluster with a least-privilege user per role, passwords from a Secret, no volumes',
    (overlay) => {
      const objs = committed(overlay);
      const nats = find(objs, 'StatefulSet', 'nats');
      expect(nats.spec.replicas).toBe(3);
      expect(nats.spec.volumeClaimTemplates).toBeUndefined();
      const [c] = nats.spec.template.spec.containers;
      expect(c.args).toEqual(expect.arrayContaining(['--config', '/etc/nats/mnemo.conf', '--cluster_name', 'mnemo']));
      expect(c.args.join(' ')).not.toMatch(/-js|jetstream|--user|--pass/);
      const routes = c.args[c.args.indexOf('--routes') + 1].split(',');
      expect(routes).toHaveLength(3);
      const conf: string = find(objs, 'ConfigMap', 'mnemo-nats-config').data['mnemo.conf'];
      expect(conf).toMatch(/tls \{\n\s+cert_file: "\/etc\/mnemo-tls\/nats\.pem"/);
      for (const role of ['scheduler', 'gateway', 'profiler', 'node'])
        expect(conf).toContain(`{ user: "${role}", password: $NATS_${role.toUpperCase()}_PASSWORD,`);
      // Every service logs in as its role, with that role's password from the Secret, and verifies the server against the CA.
      const role: Record<string, string> = { scheduler: 'scheduler', gateway: 'gateway', profiler: 'profiler', 'node-manager': 'node' };
      for (const o of objs.filter((x) => x.spec?.template?.spec && x.metadata.name !== 'nats')) {
        const s = o.spec.template.spec.containers[0];
        const env = Object.fromEntries(s.env.map((e: Json) => [e.name, e]));
        expect(env.NATS_USER.value).toBe(role[o.metadata.name]);
        expect(env.NATS_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: 'mnemo-nats', key: role[o.metadata.name] });
        expect(env.NATS_URL.value).toBe('nats://nats.mnemo.svc:4222');
        expect(env.NATS_TLS_CA.value).toBe('/etc/mnemo-tls/ca.pem');
        const tls = o.spec.template.spec.volumes.find((v: Json) => v.name === 'tls').secret;
        expect(tls.secretName).toBe('mnemo-tls');
        // A service gets the CA only; a node its own certificate too; never the NATS server's key.
        expect(tls.items.map((i: Json) => i.key)).toEqual(
          o.metadata.name === 'node-manager' ? ['ca.pem', 'node.pem', 'node.key'] : ['ca.pem'],
        );
      }
    },
  );

  it.each(overlays)('%s: NetworkPolicies deny ingress but along the flows the system uses', (overlay) => {
    const objs = committed(overlay).filter((o) => o.kind === 'NetworkPolicy');
    expect(find(objs, 'NetworkPolicy', 'default-deny-ingress').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
    const ingress = (name: string) => find(objs, 'NetworkPolicy', name).spec.ingress as Json[];
    const peers = (name: string, port: number) =>
      ingress(name)
        .filter((r) => r.ports.some((p: Json) => p.port === port))
        .flatMap((r) =>
          (r.from ?? [{ anywhere: true }]).map((f: Json) => f.podSelector?.matchLabels?.['app.kubernetes.io/component'] ?? f),
        );
    expect(peers('nats', 4222).sort()).toEqual(['gateway', 'node-manager', 'profiler', 'scheduler']);
    expect(peers('nats', 6222)).toEqual(['nats']);
    expect(peers('node-manager', 50061)).toEqual(['node-manager']);
    expect(peers('profiler', 8090)).toEqual(['gateway']);
    expect(peers('scheduler', 9480)).toEqual([{ podSelector: { matchLabels: { 'mnemo.io/indexer-client': 'true' } } }]);
    expect(peers('gateway', 8080)).toEqual([{ anywhere: true }]);
    for (const [name, port] of [
      ['scheduler', 9402],
      ['node-manager', 9411],
      ['gateway', 9401],
      ['profiler', 9404],
    ] as const)
      expect(peers(name, port)).toEqual([{ namespaceSelector: { matchLabels: { 'mnemo.io/monitoring': 'true' } } }]);
  });

  it.each(overlays)('%s: no secret value is written into a manifest', (overlay) => {
    for (const s of containers(committed(overlay))) {
      for (const e of s.env ?? []) if (/PASSWORD|DATABASE_URL|API_KEYS/.test(e.name)) expect(e.valueFrom?.secretKeyRef).toBeDefined();
    }
    expect(committed(overlay).some((o) => o.kind === 'Secret')).toBe(false);
  });

  it.each(overlays)('%s: gateway Deployment + Service + HPA, scheduler replicas, profiler on the Postgres Secret', (overlay) => {
    const objs = committed(overlay);
    expect(find(objs, 'HorizontalPodAutoscaler', 'gateway').spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'gateway',
    });
    expect(find(objs, 'Service', 'gateway').spec.ports.map((p: Json) => p.port)).toEqual([8080, 50051]);
    expect(find(objs, 'Deployment', 'scheduler').spec.replicas).toBeGreaterThanOrEqual(2);
    const profiler = find(objs, 'Deployment', 'profiler').spec.template.spec.containers[0];
    expect(profiler.env.find((e: Json) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({
      name: 'mnemo-postgres',
      key: 'url',
    });
    for (const kind of ['Deployment', 'StatefulSet']) {
      for (const o of objs.filter((x) => x.kind === kind && x.metadata.name !== 'nats')) {
        expect(o.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
      }
    }
  });

  it.each(overlays)('%s: node-managers are a StatefulSet on local SSD volumes, drained on SIGTERM, one disruption at a time', (overlay) => {
    const objs = committed(overlay);
    const nm = find(objs, 'StatefulSet', 'node-manager');
    const c = nm.spec.template.spec.containers[0];
    const env = Object.fromEntries(c.env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
    expect(env.NODE_ID).toBe('$(POD_NAME)');
    expect(env.NODE_GRPC_ADVERTISE).toBe('$(POD_NAME).node-manager.mnemo.svc:50061');
    expect(env.NODE_KV_SSD_POOLS).toMatch(/^\/data\/kv\/ssd-0\.pool=/);
    expect(c.volumeMounts).toEqual([
      { name: 'kv', mountPath: '/data/kv' },
      { name: 'tls', mountPath: '/etc/mnemo-tls', readOnly: true },
    ]);
    expect(env.NODE_GRPC_TLS_CERT).toBe('/etc/mnemo-tls/node.pem');
    expect(nm.spec.volumeClaimTemplates[0].spec.storageClassName).toBe('mnemo-local-ssd');
    // The node's graceful stop (goodbye heartbeat, drain) finishes within bootOrExit's 10 s.
    expect(nm.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(10);
    const pvs = objs.filter((o) => o.kind === 'PersistentVolume');
    expect(pvs).toHaveLength(nm.spec.replicas);
    for (const pv of pvs) expect(pv.spec.local.path).toBeDefined();
    expect(find(objs, 'PodDisruptionBudget', 'node-manager').spec.maxUnavailable).toBe(1);
    expect(find(objs, 'Deployment', 'profiler')).toBeDefined();
  });

  it('gpu requests one GPU per node-manager and runs the CUDA backend; local requests none', () => {
    const gpu = find(committed('gpu'), 'StatefulSet', 'node-manager').spec.template.spec;
    expect(gpu.containers[0].resources.limits['nvidia.com/gpu']).toBe('1');
    expect(gpu.containers[0].env.find((e: Json) => e.name === 'NODE_REFERENCE_BACKEND').value).toBe('cuda');
    expect(gpu.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    const local = find(committed('local'), 'StatefulSet', 'node-manager').spec.template.spec;
    expect(JSON.stringify(local)).not.toContain('nvidia.com/gpu');
  });
});
