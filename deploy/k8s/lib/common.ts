// Pieces every Mnemo workload shares: the namespace, labels, the one image, the NATS and
// Postgres credentials (Secrets the operator creates; never committed) and ops probes.
import type { NatsRole } from '@mnemo/testkit';
import type { IEnvVar, IPodSecurityContext, IProbe, ISecurityContext, IVolume, IVolumeMount } from 'kubernetes-models/v1';

export const NAMESPACE = 'mnemo';
/** The image docker-compose.yml builds from the root Dockerfile; override with --image. */
export const DEFAULT_IMAGE = 'mnemo:local';
/** Secret with keys `user` and `password`: the NATS account every service and the NATS cluster use. */
export const NATS_SECRET = 'mnemo-nats';
/** Secret with key `url`: postgres://… of the external database (the profiler's registry). */
export const POSTGRES_SECRET = 'mnemo-postgres';
/** Admin keys of the scheduler's KV indexer API (key `keys`, comma-separated). */
export const INDEXER_SECRET = 'mnemo-indexer-admin';
export const NATS_CLIENT_PORT = 4222;

export const labels = (component: string): Record<string, string> => ({
  'app.kubernetes.io/name': 'mnemo',
  'app.kubernetes.io/component': component,
  'app.kubernetes.io/part-of': 'mnemo',
});
export const selector = (component: string): Record<string, string> => ({
  'app.kubernetes.io/name': 'mnemo',
  'app.kubernetes.io/component': component,
});
export const meta = (name: string, component: string) => ({ name, namespace: NAMESPACE, labels: labels(component) });

export const plainEnv = (vars: Record<string, string>): IEnvVar[] => Object.entries(vars).map(([name, value]) => ({ name, value }));

/** Secret of the private CA's files (ca.pem; nats.pem/.key for the NATS servers; node.pem/.key for node ↔ node gRPC). */
export const TLS_SECRET = 'mnemo-tls';
/** Where a pod finds the files of TLS_SECRET it is given. */
export const TLS_DIR = '/etc/mnemo-tls';

/**
 * A service's NATS user: its role's name (one user per role, least-privilege subjects: see
 * deploy/k8s/lib/nats.ts and docs/security.md), its password from the `mnemo-nats` Secret's key
 * of that role, and TLS verified against the private CA. No password is in a manifest.
 */
export const natsEnv = (role: NatsRole): IEnvVar[] => [
  { name: 'NATS_USER', value: role },
  { name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: NATS_SECRET, key: role } } },
  { name: 'NATS_URL', value: `nats://nats.${NAMESPACE}.svc:${NATS_CLIENT_PORT}` },
  { name: 'NATS_TLS_CA', value: `${TLS_DIR}/ca.pem` },
];

/**
 * The TLS_SECRET volume with only `files` of it (a service gets the CA, a node its certificate too).
 */
export const tlsVolume = (files: string[]): IVolume => ({
  name: 'tls',
  secret: { secretName: TLS_SECRET, defaultMode: 0o440, items: files.map((f) => ({ key: f, path: f })) },
});
export const tlsMount = (): IVolumeMount => ({ name: 'tls', mountPath: TLS_DIR, readOnly: true });

/** Env shared by the services: their NATS user, logs, ops endpoints on every interface (probes come from the kubelet). */
export const serviceEnv = (role: NatsRole): IEnvVar[] => [...natsEnv(role), ...plainEnv({ LOG_LEVEL: 'info', METRICS_HOST: '0.0.0.0' })];

/**
 * /readyz and /healthz of a service's ops endpoints. Readiness is what the service reports
 * (NATS connected, registered, accepting); liveness only that the process answers.
 * `port`: the named container port.
 */
export const probes = (port: string): { readinessProbe: IProbe; livenessProbe: IProbe; startupProbe: IProbe } => ({
  readinessProbe: { httpGet: { path: '/readyz', port }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 3 },
  livenessProbe: {
    httpGet: { path: '/healthz', port },
    initialDelaySeconds: 10,
    periodSeconds: 10,
    timeoutSeconds: 3,
    failureThreshold: 6,
  },
  // Model loading and the SSD journal replay can take a while on a cold start.
  startupProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 5, failureThreshold: 60 },
});

/** Services run as the image's unprivileged `node` user (uid 1000 in node:20-bookworm). */
export const podSecurity = (): IPodSecurityContext => ({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 });
export const containerSecurity = (): ISecurityContext => ({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });

/** Prometheus annotations for clusters that scrape by annotation. */
export const scrapeAnnotations = (port: number): Record<string, string> => ({
  'prometheus.io/scrape': 'true',
  'prometheus.io/port': String(port),
  'prometheus.io/path': '/metrics',
});

/** A kubernetes-models object: it checks itself against the Kubernetes schema and gives its manifest. */
export interface K8sObject {
  readonly kind: string;
  readonly metadata?: { readonly name?: string };
  validate(): void;
  toJSON(): unknown;
}
