import { Service } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { containerSecurity, meta, NAMESPACE, NATS_CLIENT_PORT, natsEnv, selector } from './common.mjs';

const REPLICAS = 3;
const CLUSTER_PORT = 6222;
const MONITOR_PORT = 8222;
/** The image docker-compose.yml runs. */
const NATS_IMAGE = 'nats:2.10-alpine';

/**
 * NATS as a 3-server cluster with one account for clients and routes. Mnemo uses core NATS
 * only (request-reply, queue groups, plain subjects; no JetStream), so the servers keep no
 * state: no volumes, and a restarted server rejoins through its routes. Credentials come from
 * the `mnemo-nats` Secret through `$(VAR)` expansion of the arguments, so no password is in a
 * manifest; routes carry them in their URLs (the only place nats-server reads route credentials).
 */
export function natsCluster() {
  const peer = (i) => `nats://$(NATS_USER):$(NATS_PASSWORD)@nats-${i}.nats-headless.${NAMESPACE}.svc:${CLUSTER_PORT}`;
  const routes = Array.from({ length: REPLICAS }, (_, i) => peer(i)).join(',');
  const env = natsEnv().filter((e) => e.name !== 'NATS_URL');
  return [
    new Service({
      metadata: meta('nats-headless', 'nats'),
      spec: {
        clusterIP: 'None',
        // Routes must find peers before they are ready: readiness needs the cluster formed.
        publishNotReadyAddresses: true,
        selector: selector('nats'),
        ports: [
          { name: 'client', port: NATS_CLIENT_PORT, targetPort: 'client' },
          { name: 'cluster', port: CLUSTER_PORT, targetPort: 'cluster' },
          { name: 'monitor', port: MONITOR_PORT, targetPort: 'monitor' },
        ],
      },
    }),
    new Service({
      metadata: meta('nats', 'nats'),
      spec: { selector: selector('nats'), ports: [{ name: 'client', port: NATS_CLIENT_PORT, targetPort: 'client' }] },
    }),
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
                  '--user',
                  '$(NATS_USER)',
                  '--pass',
                  '$(NATS_PASSWORD)',
                  '--cluster_name',
                  'mnemo',
                  '--cluster',
                  `nats://$(NATS_USER):$(NATS_PASSWORD)@0.0.0.0:${CLUSTER_PORT}`,
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
              },
            ],
          },
        },
      },
    }),
    new PodDisruptionBudget({ metadata: meta('nats', 'nats'), spec: { maxUnavailable: 1, selector: { matchLabels: selector('nats') } } }),
  ];
}
