import { Service, type IEnvVar, type IResourceRequirements, type IServiceSpec } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget, type IPodDisruptionBudgetSpec } from 'kubernetes-models/policy/v1';
import { TRAINED_MODELS } from '@mnemo/testkit';
import {
  containerSecurity,
  meta,
  NAMESPACE,
  plainEnv,
  podSecurity,
  INDEXER_SECRET,
  POSTGRES_SECRET,
  probes,
  scrapeAnnotations,
  selector,
  serviceEnv,
  tlsMount,
  tlsVolume,
} from './common.js';
import type { Overlay } from './overlays.js';
import type { K8sObject } from './common.js';

/** Ports of docker-compose.yml, so the two deployments read alike. */
export const PORTS = {
  gatewayHttp: 8080,
  gatewayGrpc: 50051,
  gatewayOps: 9401,
  schedulerOps: 9402,
  schedulerIndexer: 9480,
  profilerOps: 9404,
  profilerHttp: 8090,
  nodeOps: 9411,
  nodeGrpc: 50061,
};
/** The trained models inside the image (scripts/start.mjs serves the same), the default first. */
export const MODEL_DIRS = TRAINED_MODELS.map((m) => `/app/tools/train/models/${m}`);
export const DEFAULT_MODEL = 'fortune-base';

/** What sets one Mnemo service's Deployment apart: it runs `node apps/<name>/dist/main.js`. */
interface ServiceSpec {
  name: string;
  image: string;
  replicas: number;
  env: IEnvVar[];
  /** Container ports by name, in manifest order; `ops` serves /metrics (scraped), /healthz and /readyz (probed). */
  ports: Record<string, number> & { ops: number };
  resources: IResourceRequirements;
}

/** A port a Service exposes; it forwards to the pods' container port of the same name. */
export interface NamedPort {
  readonly name: string;
  readonly port: number;
  readonly appProtocol?: string;
}

/** The Service `name` over the pods of `component`; `spec` holds what sets it apart (headless and the like). */
export function namedPortService(name: string, component: string, ports: readonly NamedPort[], spec: IServiceSpec = {}): Service {
  const servicePorts = ports.map((p) => ({
    name: p.name,
    port: p.port,
    targetPort: p.name,
    ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
  }));
  return new Service({ metadata: meta(name, component), spec: { ...spec, selector: selector(component), ports: servicePorts } });
}

/** A Deployment of one Mnemo service (`node apps/<app>/dist/main.js` in the one image). */
function serviceDeployment(s: ServiceSpec): Deployment {
  return new Deployment({
    metadata: meta(s.name, s.name),
    spec: {
      replicas: s.replicas,
      selector: { matchLabels: selector(s.name) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: meta(s.name, s.name).labels, annotations: scrapeAnnotations(s.ports.ops) },
        spec: {
          securityContext: podSecurity(),
          // SIGTERM runs the service's graceful stop (drain NATS, answer what is in flight); it exits within 10 s.
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: s.name,
              image: s.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['node', `apps/${s.name}/dist/main.js`],
              env: s.env,
              ports: Object.entries(s.ports).map(([name, containerPort]) => ({ name, containerPort })),
              ...probes('ops'),
              resources: s.resources,
              securityContext: containerSecurity(),
              volumeMounts: [tlsMount()],
            },
          ],
          volumes: [tlsVolume(['ca.pem'])],
        },
      },
    },
  });
}

const pdb = (name: string, spec: Omit<IPodDisruptionBudgetSpec, 'selector'>) =>
  new PodDisruptionBudget({ metadata: meta(name, name), spec: { ...spec, selector: { matchLabels: selector(name) } } });

/**
 * The gateway: OpenAI REST + gRPC, scaled on CPU by an HPA (tokenization and SSE are its work).
 * Its /metrics, /healthz and /readyz are on its ops port (9401), not in the Service. API keys come from the optional
 * `mnemo-api-keys` Secret (key `keys`, comma-separated); without it auth is off.
 */
export function gateway(o: Overlay, image: string): K8sObject[] {
  const env = [
    ...serviceEnv('gateway'),
    ...plainEnv({
      GATEWAY_HOST: '0.0.0.0',
      GATEWAY_PORT: String(PORTS.gatewayHttp),
      GATEWAY_GRPC_PORT: String(PORTS.gatewayGrpc),
      METRICS_PORT: String(PORTS.gatewayOps),
      MNEMO_DEFAULT_MODEL: DEFAULT_MODEL,
      GATEWAY_PROFILER_URL: `http://profiler.${NAMESPACE}.svc:${PORTS.profilerHttp}`,
    }),
    { name: 'MNEMO_API_KEYS', valueFrom: { secretKeyRef: { name: 'mnemo-api-keys', key: 'keys', optional: true } } },
  ];
  return [
    serviceDeployment({
      name: 'gateway',
      image,
      replicas: o.gatewayReplicas,
      env,
      ports: { http: PORTS.gatewayHttp, grpc: PORTS.gatewayGrpc, ops: PORTS.gatewayOps },
      resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '2Gi' } },
    }),
    namedPortService('gateway', 'gateway', [
      { name: 'http', port: PORTS.gatewayHttp },
      { name: 'grpc', port: PORTS.gatewayGrpc, appProtocol: 'grpc' },
    ]),
    new HorizontalPodAutoscaler({
      metadata: meta('gateway', 'gateway'),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway' },
        minReplicas: o.gatewayReplicas,
        maxReplicas: o.gatewayMaxReplicas,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
        // Streams are long: scale down slowly so a replica's open streams are not cut at every dip.
        behavior: { scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
      },
    }),
    pdb('gateway', { minAvailable: 1 }),
  ];
}

/**
 * Schedulers: replicas share SCHEDULE requests through the `scheduler` NATS queue group, and
 * each keeps the whole node registry and KV directory from heartbeats and KV events.
 */
export function scheduler(o: Overlay, image: string): K8sObject[] {
  return [
    serviceDeployment({
      name: 'scheduler',
      image,
      replicas: o.schedulerReplicas,
      // The KV indexer API (docs/interop.md) is an operator API: reachable in the cluster only.
      env: [
        ...serviceEnv('scheduler'),
        ...plainEnv({
          METRICS_PORT: String(PORTS.schedulerOps),
          SCHEDULER_NODE_TIMEOUT_MS: '3000',
          SCHEDULER_INDEXER: 'on',
          SCHEDULER_INDEXER_HOST: '0.0.0.0',
          SCHEDULER_INDEXER_PORT: String(PORTS.schedulerIndexer),
        }),
        // The indexer answers only to these keys (an operator's); a tenant's gateway key may query its own tenant.
        { name: 'SCHEDULER_INDEXER_ADMIN_KEYS', valueFrom: { secretKeyRef: { name: INDEXER_SECRET, key: 'keys' } } },
        { name: 'MNEMO_API_KEYS', valueFrom: { secretKeyRef: { name: 'mnemo-api-keys', key: 'keys', optional: true } } },
      ],
      ports: { ops: PORTS.schedulerOps, indexer: PORTS.schedulerIndexer },
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1Gi' } },
    }),
    namedPortService('scheduler', 'scheduler', [
      { name: 'ops', port: PORTS.schedulerOps },
      { name: 'indexer', port: PORTS.schedulerIndexer },
    ]),
    pdb('scheduler', { minAvailable: 1 }),
  ];
}

/**
 * The profiler: model registry and DroidSpeak profiling jobs on the external Postgres
 * (DATABASE_URL from the `mnemo-postgres` Secret). Replicas share jobs through leases.
 */
export function profiler(_o: Overlay, image: string): K8sObject[] {
  return [
    serviceDeployment({
      name: 'profiler',
      image,
      replicas: 1,
      env: [
        ...serviceEnv('profiler'),
        { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: POSTGRES_SECRET, key: 'url' } } },
        ...plainEnv({ METRICS_PORT: String(PORTS.profilerOps), HTTP_HOST: '0.0.0.0', HTTP_PORT: String(PORTS.profilerHttp) }),
      ],
      ports: { ops: PORTS.profilerOps, http: PORTS.profilerHttp },
      resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '4Gi' } },
    }),
    namedPortService('profiler', 'profiler', [
      { name: 'http', port: PORTS.profilerHttp },
      { name: 'ops', port: PORTS.profilerOps },
    ]),
  ];
}
