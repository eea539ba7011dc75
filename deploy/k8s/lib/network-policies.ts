import {
  NetworkPolicy,
  type INetworkPolicyIngressRule,
  type INetworkPolicyPeer,
  type INetworkPolicyPort,
} from 'kubernetes-models/networking.k8s.io/v1';
import { meta, NATS_CLIENT_PORT, selector } from './common.js';
import type { K8sObject } from './common.js';
import { PORTS } from './services.js';

/** Namespaces whose pods may scrape /metrics (Prometheus): label them so. */
export const MONITORING_LABEL = { 'mnemo.io/monitoring': 'true' };
/** Pods of the mnemo namespace that may ask the KV indexer API (an operator's tool): label them so. */
export const INDEXER_CLIENT_LABEL = { 'mnemo.io/indexer-client': 'true' };

const from = (components: string[]): INetworkPolicyPeer[] => components.map((c) => ({ podSelector: { matchLabels: selector(c) } }));
const monitoring = (): INetworkPolicyPeer[] => [{ namespaceSelector: { matchLabels: MONITORING_LABEL } }];
const tcp = (port: number): INetworkPolicyPort[] => [{ protocol: 'TCP', port }];

/** A policy admitting only `ingress` to the pods of `component`. */
const allow = (name: string, component: string, ingress: INetworkPolicyIngressRule[]) =>
  new NetworkPolicy({
    metadata: meta(name, component),
    spec: { podSelector: { matchLabels: selector(component) }, policyTypes: ['Ingress'], ingress },
  });

/**
 * Ingress only along the flows the architecture has (docs/security.md): everything else in the
 * namespace is denied. NATS from the four services (and its routes from its own pods); node ↔
 * node gRPC from node-managers only; the profiler's REST from the gateway only; the indexer from
 * pods labelled mnemo.io/indexer-client; ops ports (/metrics) from namespaces labelled
 * mnemo.io/monitoring; the gateway's REST and gRPC from anywhere (it is the front door).
 * Kubelet probes come from the node itself, which CNIs admit whatever a policy says.
 */
export function networkPolicies(): K8sObject[] {
  const clients = ['scheduler', 'node-manager', 'gateway', 'profiler'];
  return [
    new NetworkPolicy({
      metadata: meta('default-deny-ingress', 'namespace'),
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    }),
    allow('nats', 'nats', [
      { from: from(clients), ports: tcp(NATS_CLIENT_PORT) },
      { from: from(['nats']), ports: tcp(6222) },
      { from: monitoring(), ports: tcp(8222) },
    ]),
    allow('scheduler', 'scheduler', [
      { from: [{ podSelector: { matchLabels: INDEXER_CLIENT_LABEL } }], ports: tcp(PORTS.schedulerIndexer) },
      { from: monitoring(), ports: tcp(PORTS.schedulerOps) },
    ]),
    allow('node-manager', 'node-manager', [
      { from: from(['node-manager']), ports: tcp(PORTS.nodeGrpc) },
      { from: monitoring(), ports: tcp(PORTS.nodeOps) },
    ]),
    allow('profiler', 'profiler', [
      { from: from(['gateway']), ports: tcp(PORTS.profilerHttp) },
      { from: monitoring(), ports: tcp(PORTS.profilerOps) },
    ]),
    allow('gateway', 'gateway', [
      { ports: [...tcp(PORTS.gatewayHttp), ...tcp(PORTS.gatewayGrpc)] },
      { from: monitoring(), ports: tcp(PORTS.gatewayOps) },
    ]),
  ];
}
