import { ConfigMap } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { natsUsersFromEnv, type NatsRole } from '@mnemo/testkit';
import { containerSecurity, meta, NAMESPACE, NATS_CLIENT_PORT, NATS_SECRET, selector, TLS_DIR, tlsMount, tlsVolume } from './common.js';
import type { K8sObject } from './common.js';
import { namedPortService } from './services.js';

const REPLICAS = 3;
const CLUSTER_PORT = 6222;
const MONITOR_PORT = 8222;
/** The image docker-compose.yml runs. */
const NATS_IMAGE = 'nats:2.10-alpine';

/** The NATS users of the cluster: one per role; the node-managers share one (a StatefulSet's pods share one template). */
const ROLES: readonly NatsRole[] = ['scheduler', 'gateway', 'profiler', 'node'];
const passwordEnv = (role: string) => `NATS_${role.toUpperCase()}_PASSWORD`;

/** nats-server's configuration: client TLS from the private CA, and the least-privilege users. */
export function natsConf(): string {
  return (
    `# Mnemo's NATS (generated from deploy/k8s/lib/nats.ts; docs/security.md). Passwords are read from the environment.\n` +
    `tls {\n  cert_file: "${TLS_DIR}/nats.pem"\n  key_file: "${TLS_DIR}/nats.key"\n  timeout: 2\n}\n` +
    natsUsersFromEnv(
      ROLES.map((role) => ({ role, ...(role === 'node' ? { nodeId: '*' } : {}), user: role, passwordEnv: passwordEnv(role) })),
    )
  );
}

/**
 * NATS as a 3-server cluster. Mnemo uses core NATS only (request-reply, queue groups, plain
 * subjects; no JetStream), so the servers keep no state: no volumes, and a restarted server
 * rejoins through its routes. Clients speak TLS (the `mnemo-tls` Secret's nats certificate) and
 * log in as their role's user with its subject permissions (the ConfigMap's mnemo.conf); the
 * passwords come from the `mnemo-nats` Secret (a key per role, and `route` for the routes between
 * servers, which carry it in their URLs — the only place nats-server reads route credentials),
 * by environment, so no password is in a manifest.
 */
export function natsCluster(): K8sObject[] {
  const peer = (i: number) => `nats://route:$(NATS_ROUTE_PASSWORD)@nats-${i}.nats-headless.${NAMESPACE}.svc:${CLUSTER_PORT}`;
  const routes = Array.from({ length: REPLICAS }, (_, i) => peer(i)).join(',');
  const env = ['route', ...ROLES].map((role) => ({
    name: passwordEnv(role),
    valueFrom: { secretKeyRef: { name: NATS_SECRET, key: role } },
  }));
  return [
    new ConfigMap({ metadata: meta('mnemo-nats-config', 'nats'), data: { 'mnemo.conf': natsConf() } }),
    namedPortService(
      'nats-headless',
      'nats',
      [
        { name: 'client', port: NATS_CLIENT_PORT },
        { name: 'cluster', port: CLUSTER_PORT },
        { name: 'monitor', port: MONITOR_PORT },
      ],
      // Routes must find peers before they are ready: readiness needs the cluster formed.
      { clusterIP: 'None', publishNotReadyAddresses: true },
    ),
    namedPortService('nats', 'nats', [{ name: 'client', port: NATS_CLIENT_PORT }]),
    new StatefulSet({
      metadata: meta('nats', 'nats'),
      spec: {
        serviceName: 'nats-headless',
        replicas: REPLICAS,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selector('nats') },
        template: {
          metadata: { labels: meta('nats', 'nats').labels },
          spec: {
            terminationGracePeriodSeconds: 30,
            // One server per machine where the cluster has several, so one machine's loss keeps a quorum of routes.
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector('nats') } },
                  },
                ],
              },
            },
            containers: [
              {
                name: 'nats',
                image: NATS_IMAGE,
                env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, ...env],
                args: [
                  '--name',
                  '$(POD_NAME)',
                  '--port',
                  String(NATS_CLIENT_PORT),
                  '--http_port',
                  String(MONITOR_PORT),
                  '--config',
                  '/etc/nats/mnemo.conf',
                  '--cluster_name',
                  'mnemo',
                  '--cluster',
                  `nats://route:$(NATS_ROUTE_PASSWORD)@0.0.0.0:${CLUSTER_PORT}`,
                  '--routes',
                  routes,
                ],
                ports: [
                  { name: 'client', containerPort: NATS_CLIENT_PORT },
                  { name: 'cluster', containerPort: CLUSTER_PORT },
                  { name: 'monitor', containerPort: MONITOR_PORT },
                ],
                readinessProbe: { httpGet: { path: '/healthz', port: 'monitor' }, periodSeconds: 5, timeoutSeconds: 3 },
                livenessProbe: {
                  httpGet: { path: '/healthz', port: 'monitor' },
                  initialDelaySeconds: 10,
                  periodSeconds: 10,
                  timeoutSeconds: 3,
                  failureThreshold: 6,
                },
                resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
                securityContext: { ...containerSecurity(), runAsNonRoot: true, runAsUser: 1000 },
                volumeMounts: [{ name: 'config', mountPath: '/etc/nats', readOnly: true }, tlsMount()],
              },
            ],
            // The secret's files readable by the server's group.
            securityContext: { fsGroup: 1000 },
            volumes: [{ name: 'config', configMap: { name: 'mnemo-nats-config' } }, tlsVolume(['nats.pem', 'nats.key'])],
          },
        },
      },
    }),
    new PodDisruptionBudget({ metadata: meta('nats', 'nats'), spec: { maxUnavailable: 1, selector: { matchLabels: selector('nats') } } }),
  ];
}
