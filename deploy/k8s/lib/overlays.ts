// The two overlays of the Kubernetes manifests. Everything that differs between a laptop
// cluster (kind, minikube, k3d) and a GPU cluster is here; the builders in this folder read
// only these settings, so an overlay is one object, not a patch over YAML.

import type { IToleration } from 'kubernetes-models/v1';

export interface Overlay {
  /** Folder under deploy/k8s/. */
  readonly name: string;
  /** First line of every file of the overlay. */
  readonly summary: string;
  /** Gateway minimum (the HPA grows it to gatewayMaxReplicas). */
  readonly gatewayReplicas: number;
  readonly gatewayMaxReplicas: number;
  /** Replicas in the `scheduler` queue group. */
  readonly schedulerReplicas: number;
  /** Node-managers (one StatefulSet pod each). */
  readonly nodeReplicas: number;
  /** kubernetes.io/hostname of the node holding each node-manager's local SSD volume. */
  readonly ssdHosts: readonly string[];
  /** Directory on that host backing the volume (one sub-directory per volume). */
  readonly ssdPath: string;
  /** Capacity of each local volume (the SSD pool file takes most of it). */
  readonly ssdSize: string;
  /** NODE_KV_SSD_POOLS size of the pool file on it. */
  readonly ssdPoolSize: string;
  /** NODE_KV_HOST_POOL. */
  readonly hostPool: string;
  /** Extra node-manager environment (engine, backend). */
  readonly nodeEnv: Readonly<Record<string, string>>;
  readonly nodeResources: { readonly requests: Record<string, string>; readonly limits: Record<string, string> };
  readonly nodeSelector?: Record<string, string>;
  readonly tolerations?: IToleration[];
}

export const OVERLAYS: Readonly<Record<string, Overlay>> = {
  local: {
    name: 'local',
    summary: 'Mnemo on a laptop cluster (kind, minikube, k3d): CPU engines, one host path for the SSD pools.',
    gatewayReplicas: 1,
    gatewayMaxReplicas: 3,
    schedulerReplicas: 2,
    nodeReplicas: 2,
    // kind's single node is called kind-control-plane; set these to `kubectl get nodes` names.
    ssdHosts: ['kind-control-plane', 'kind-control-plane'],
    ssdPath: '/var/lib/mnemo/ssd',
    ssdSize: '2Gi',
    ssdPoolSize: '1GiB',
    hostPool: '256MiB',
    nodeEnv: { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu' },
    nodeResources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '3Gi' } },
  },
  gpu: {
    name: 'gpu',
    summary: 'Mnemo on a GPU cluster: one GPU per node-manager (CUDA backend), local NVMe volumes for the SSD pools.',
    gatewayReplicas: 2,
    gatewayMaxReplicas: 10,
    schedulerReplicas: 2,
    nodeReplicas: 4,
    // Set to the hostnames of the GPU machines whose NVMe disk is mounted at ssdPath.
    ssdHosts: ['gpu-node-0', 'gpu-node-1', 'gpu-node-2', 'gpu-node-3'],
    ssdPath: '/mnt/nvme/mnemo',
    ssdSize: '500Gi',
    ssdPoolSize: '450GiB',
    hostPool: '32GiB',
    nodeEnv: { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cuda' },
    nodeResources: { requests: { cpu: '4', memory: '48Gi', 'nvidia.com/gpu': '1' }, limits: { memory: '64Gi', 'nvidia.com/gpu': '1' } },
    // Labels and taints of the NVIDIA GPU operator / device plugin.
    nodeSelector: { 'nvidia.com/gpu.present': 'true' },
    tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
  },
};
