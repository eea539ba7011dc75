import { PersistentVolume } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { StorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import {
  containerSecurity,
  meta,
  NAMESPACE,
  plainEnv,
  podSecurity,
  probes,
  scrapeAnnotations,
  selector,
  serviceEnv,
  TLS_DIR,
  tlsMount,
  tlsVolume,
} from './common.js';
import type { Overlay } from './overlays.js';
import type { K8sObject } from './common.js';
import { MODEL_DIRS, namedPortService, PORTS } from './services.js';

export const SSD_CLASS = 'mnemo-local-ssd';

/**
 * Node-managers as a StatefulSet: a stable name is the node id (its SSD pool journal and the
 * KV directory's entries survive a restart under it), and a stable DNS name is the gRPC
 * address peers fetch chunks from. Each pod's SSD pool lives on a local PersistentVolume
 * bound to one machine (the pool is O_DIRECT on that disk; network storage would defeat it).
 * SIGTERM runs the node's drain: a goodbye heartbeat, then running requests finish (up to
 * NODE_DRAIN_TIMEOUT_MS) before NATS is drained; a PodDisruptionBudget keeps voluntary
 * evictions to one node at a time.
 */
export function nodeManagers(o: Overlay, image: string): K8sObject[] {
  if (o.ssdHosts.length < o.nodeReplicas) throw new RangeError(`overlay ${o.name}: ${o.nodeReplicas} node-managers need as many ssdHosts`);
  const env = [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ...serviceEnv('node'),
    // Node ↔ node gRPC carries (and requires) this shared token, over mutual TLS with the private CA's node certificate.
    { name: 'NODE_PEER_TOKEN', valueFrom: { secretKeyRef: { name: 'mnemo-peer-token', key: 'token' } } },
    ...plainEnv({
      NODE_ID: '$(POD_NAME)',
      METRICS_PORT: String(PORTS.nodeOps),
      NODE_GRPC_HOST: '0.0.0.0',
      NODE_GRPC_PORT: String(PORTS.nodeGrpc),
      NODE_GRPC_ADVERTISE: `$(POD_NAME).node-manager.${NAMESPACE}.svc:${PORTS.nodeGrpc}`,
      NODE_MODELS: [MODEL_DIRS[0], 'mnemo-tiny', ...MODEL_DIRS.slice(1)].join(','),
      NODE_DATA_DIR: '/data/kv',
      NODE_KV_HOST_POOL: o.hostPool,
      NODE_KV_SSD_POOLS: `/data/kv/ssd-0.pool=${o.ssdPoolSize}`,
      NODE_HEARTBEAT_MS: '1000',
      NODE_GRPC_TLS_CA: `${TLS_DIR}/ca.pem`,
      NODE_GRPC_TLS_CERT: `${TLS_DIR}/node.pem`,
      NODE_GRPC_TLS_KEY: `${TLS_DIR}/node.key`,
      ...o.nodeEnv,
    }),
  ];
  return [
    new StorageClass({
      metadata: { name: SSD_CLASS, labels: meta(SSD_CLASS, 'node-manager').labels },
      provisioner: 'kubernetes.io/no-provisioner',
      // Bind when the pod is placed, so the volume's machine and the pod's agree.
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Retain',
    }),
    ...o.ssdHosts.slice(0, o.nodeReplicas).map(
      (host, i) =>
        new PersistentVolume({
          metadata: { name: `mnemo-ssd-${i}`, labels: meta(`mnemo-ssd-${i}`, 'node-manager').labels },
          spec: {
            capacity: { storage: o.ssdSize },
            accessModes: ['ReadWriteOnce'],
            persistentVolumeReclaimPolicy: 'Retain',
            storageClassName: SSD_CLASS,
            volumeMode: 'Filesystem',
            local: { path: `${o.ssdPath}/${i}` },
            nodeAffinity: {
              required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [host] }] }] },
            },
          },
        }),
    ),
    namedPortService(
      'node-manager',
      'node-manager',
      [
        { name: 'grpc', port: PORTS.nodeGrpc, appProtocol: 'grpc' },
        { name: 'ops', port: PORTS.nodeOps },
      ],
      { clusterIP: 'None' },
    ),
    new StatefulSet({
      metadata: meta('node-manager', 'node-manager'),
      spec: {
        serviceName: 'node-manager',
        replicas: o.nodeReplicas,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selector('node-manager') },
        template: {
          metadata: { labels: meta('node-manager', 'node-manager').labels, annotations: scrapeAnnotations(PORTS.nodeOps) },
          spec: {
            securityContext: podSecurity(),
            terminationGracePeriodSeconds: 30,
            ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
            ...(o.tolerations ? { tolerations: o.tolerations } : {}),
            containers: [
              {
                name: 'node-manager',
                image,
                imagePullPolicy: 'IfNotPresent',
                command: ['node', 'apps/node-manager/dist/main.js'],
                env,
                ports: [
                  { name: 'ops', containerPort: PORTS.nodeOps },
                  { name: 'grpc', containerPort: PORTS.nodeGrpc },
                ],
                ...probes('ops'),
                resources: o.nodeResources,
                securityContext: containerSecurity(),
                volumeMounts: [{ name: 'kv', mountPath: '/data/kv' }, tlsMount()],
              },
            ],
            volumes: [tlsVolume(['ca.pem', 'node.pem', 'node.key'])],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'kv' },
            spec: { accessModes: ['ReadWriteOnce'], storageClassName: SSD_CLASS, resources: { requests: { storage: o.ssdSize } } },
          },
        ],
      },
    }),
    new PodDisruptionBudget({
      metadata: meta('node-manager', 'node-manager'),
      spec: { maxUnavailable: 1, selector: { matchLabels: selector('node-manager') } },
    }),
  ];
}
