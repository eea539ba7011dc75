import { ROUTING_POLICIES, type RoutingPolicyName } from './route.types.js';

/** What a node does with a finished turn's KV until the session's next turn. */
export type BetweenTurns =
  /** Its blocks stay in the device prefix cache until the space is needed (vLLM's automatic prefix caching); the tiers keep a copy. */
  | 'device-cache'
  /**
   * They leave the device as the turn ends; the next turn restores them from host memory over PCIe (InferCept swaps an intercepted
   * request's KV out so).
   */
  | 'offload';

/** One system the multi-round benchmark (and the twin) compares, as routing plus node behaviour. */
export interface ServingSystem {
  readonly routing: RoutingPolicyName;
  readonly betweenTurns: BetweenTurns;
  /** Offload tiers behind the device, fastest first. */
  readonly tiers: readonly ('host' | 'ssd')[];
  /** The scheduler names peers holding missing chunks (kv_sources) and the node pulls them instead of recomputing. */
  readonly peerFetch: boolean;
  /** Clients announce requests (advisories) and the reserved node prefetches their KV. */
  readonly advisories: boolean;
  /** A labelled extra: not how the named system runs at its best; never a headline. */
  readonly extra: boolean;
  /** The system it stands for, in words. */
  readonly models: string;
}

/**
 * The systems compared, each at its best as the real system would run: every one has the same
 * device, the same host capacity and (where the real system has one) the same SSD tier; only
 * Symphony moves KV between nodes and hears advisories, because only it can.
 */
export const SERVING_SYSTEMS = {
  symphony: {
    routing: 'symphony',
    betweenTurns: 'device-cache',
    tiers: ['host', 'ssd'],
    peerFetch: true,
    advisories: true,
    extra: false,
    models: 'Mnemo: Symphony routing with advisories, prefetch and peer fetch',
  },
  llmd: {
    routing: 'llmd',
    betweenTurns: 'device-cache',
    tiers: ['host', 'ssd'],
    peerFetch: false,
    advisories: false,
    extra: false,
    models: 'llm-d: default prefix + queue + KV-utilization scorers over vLLM with tiered prefix caching',
  },
  conductor: {
    routing: 'conductor',
    betweenTurns: 'device-cache',
    tiers: ['host', 'ssd'],
    peerFetch: true,
    advisories: false,
    extra: false,
    models:
      "Mooncake's Conductor (FAST'25 Algorithm 1): the lowest queue + transfer + prefill, a longer prefix pulled from its holder " +
      'past a threshold',
  },
  infercept: {
    routing: 'sticky',
    betweenTurns: 'offload',
    tiers: ['host'],
    peerFetch: false,
    advisories: false,
    extra: false,
    models: 'InferCept: a session stays on its node; its KV is swapped to host memory between turns and back over PCIe',
  },
  recompute: {
    routing: 'recompute',
    betweenTurns: 'device-cache',
    tiers: ['host', 'ssd'],
    peerFetch: false,
    advisories: false,
    extra: false,
    models: 'vLLM behind a least-loaded balancer: KV location ignored',
  },
  'sticky-device': {
    routing: 'sticky',
    betweenTurns: 'device-cache',
    tiers: ['host', 'ssd'],
    peerFetch: false,
    advisories: false,
    extra: true,
    models: 'session affinity with the KV left in the device prefix cache (no swap cost)',
  },
  'prefix-affinity': {
    routing: 'prefix-affinity',
    betweenTurns: 'device-cache',
    tiers: ['host', 'ssd'],
    peerFetch: false,
    advisories: false,
    extra: true,
    models: 'the longest cached prefix wins, load only breaks ties (herds onto a shared prompt’s holder)',
  },
} as const satisfies Record<string, ServingSystem>;

export type ServingSystemName = keyof typeof SERVING_SYSTEMS;

/**
 * Cached (unreferenced) device blocks a node of the system keeps for reuse: none when it
 * offloads between turns (a finished turn's blocks are evicted as they are released; blocks
 * running sequences share stay), else unbounded (kept until the space is needed).
 */
export function cachedBlocksBetweenTurns(system: ServingSystem): number {
  return system.betweenTurns === 'offload' ? 0 : Infinity;
}

/** Problems with a system's description (empty when it is consistent). */
export function servingSystemProblems(name: string, s: ServingSystem): string[] {
  const out: string[] = [];
  if (!(ROUTING_POLICIES as readonly string[]).includes(s.routing)) out.push(`${name}: unknown routing policy ${s.routing}`);
  if (s.betweenTurns === 'offload' && !s.tiers.includes('host')) out.push(`${name}: offloads between turns but has no host tier`);
  if (s.advisories && s.routing !== 'symphony') out.push(`${name}: only symphony routing weighs reservations`);
  if (s.peerFetch && s.routing !== 'symphony' && s.routing !== 'conductor')
    out.push(`${name}: only symphony and conductor routing weigh peer fetches`);
  return out;
}
