import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import type { DirectoryTier } from '../directory/kv-directory.types.js';

/** Where a run of prompt tokens came from on the node that ran the request. */
export type KvSourceKind = 'device' | 'host' | 'ssd' | 'host+ssd' | 'peer' | 'droidspeak' | 'computed' | 'unknown';

/** Why a run of prompt tokens was computed. */
export type KvMissReason =
  | 'never_stored'
  | 'evicted'
  | 'expired'
  | 'corrupt'
  | 'truncated'
  | 'model_mismatch'
  | 'tenant_isolated'
  | 'held_elsewhere'
  | 'partial'
  | 'node_record_missing';

/** The node's record of one request (its half of the answer). */
export interface NodeKvFacts {
  readonly deviceTokens: number;
  readonly host: number;
  readonly ssd: number;
  readonly peer: number;
  readonly peerNode?: string;
  readonly droidspeak?: { readonly base: string; readonly tokens: number };
}

export interface ChunkDropFact {
  readonly reason: 'evicted' | 'expired' | 'corrupt' | 'truncated';
  readonly tier: string;
  readonly policy: string;
  readonly atUnixMs: number;
}

/** What routing saw for one whole chunk (the scheduler's half). */
export interface ChunkRoutingFacts {
  /** Other nodes holding the chunk when the request was routed, with their tiers. */
  readonly heldBy: ReadonlyArray<{ readonly nodeId: string; readonly tiers: readonly DirectoryTier[] }>;
  /** Models under which the same tokens were cached for this tenant (a different chunk key). */
  readonly otherModels: readonly string[];
  /** Another tenant had sent these tokens and a node held their copy: isolation kept them apart. */
  readonly otherTenantHeld: boolean;
  /** The node's reasons for dropping this chunk, newest last. */
  readonly drops: readonly ChunkDropFact[];
}

export interface ExplainInput {
  readonly promptTokens: number;
  /** The prompt's whole-chunk keys. */
  readonly chunkKeys: readonly string[];
  readonly nodeId: string;
  readonly policy: string;
  /** Null: the node's record is gone (the node left, or forgot it). */
  readonly node: NodeKvFacts | null;
  /** Per whole chunk. */
  readonly routing: readonly ChunkRoutingFacts[];
  /** The caller may learn that another tenant sent these tokens. */
  readonly admin: boolean;
}

export interface KvSegment {
  readonly chunk: number;
  readonly start: number;
  readonly tokens: number;
  readonly key: string;
  readonly source: KvSourceKind;
  readonly reason?: KvMissReason;
  readonly detail: string;
  readonly tier?: string;
  readonly policy?: string;
  readonly atUnixMs?: number;
  readonly otherNode?: string;
  readonly otherModel?: string;
}

const when = (ms: number) => new Date(ms).toISOString();

/**
 * `why` for one request: the prompt cut into runs of tokens by chunk and by source, each run the
 * node did not serve explained. The node's record gives the ranges — device prefix first, then a
 * restore (host and SSD pools, or a peer), DroidSpeak reuse — and the reasons it knows for chunks
 * it dropped (evicted by a tier's policy, expired, corrupt); routing's record gives what other
 * nodes held, other models' copies, and whether tenant isolation kept another tenant's copy out.
 * That last one reveals that another tenant sent the same prompt, so only an admin sees it;
 * anyone else is told the chunk was never stored for them, which is true of their tenant.
 */
export function explainKv(i: ExplainInput): KvSegment[] {
  const out: KvSegment[] = [];
  const n = i.node;
  const restoredUntil = n ? n.deviceTokens + n.host + n.ssd + n.peer : 0;
  const restoredKind: KvSourceKind = !n
    ? 'computed'
    : n.peer > 0
      ? 'peer'
      : n.host > 0 && n.ssd > 0
        ? 'host+ssd'
        : n.host > 0
          ? 'host'
          : 'ssd';
  const dsUntil = n?.droidspeak ? Math.min(i.promptTokens, n.droidspeak.tokens) : 0;
  const sourceAt = (t: number): KvSourceKind => {
    if (!n) return 'unknown';
    if (t < n.deviceTokens) return 'device';
    if (t < restoredUntil) return restoredKind;
    if (t < dsUntil) return 'droidspeak';
    return 'computed';
  };
  const chunks = Math.ceil(i.promptTokens / CHUNK_TOKENS);
  for (let c = 0; c < chunks; c++) {
    const start = c * CHUNK_TOKENS;
    const end = Math.min(i.promptTokens, start + CHUNK_TOKENS);
    const key = i.chunkKeys[c] ?? '';
    // Runs of one source inside the chunk (a device prefix ends on a 16-token block, a restore on a chunk).
    const cuts = [
      start,
      ...[n?.deviceTokens, restoredUntil, dsUntil].filter((x): x is number => x !== undefined && x > start && x < end),
      end,
    ].sort((a, b) => a - b);
    for (let k = 0; k + 1 < cuts.length; k++) {
      const [s, e] = [cuts[k]!, cuts[k + 1]!];
      if (e <= s) continue;
      const source = sourceAt(s);
      const base = { chunk: c, start: s, tokens: e - s, key, source };
      if (source !== 'computed' && source !== 'unknown') out.push({ ...base, ...served(source, n!) });
      else out.push({ ...base, ...missed(i, c, key, e === i.promptTokens && key === '') });
    }
  }
  return out;
}

function served(source: KvSourceKind, n: NodeKvFacts): Omit<KvSegment, 'chunk' | 'start' | 'tokens' | 'key' | 'source'> {
  switch (source) {
    case 'device':
      return { detail: 'device prefix cache hit', tier: 'device' };
    case 'host':
      return { detail: "restored from the node's host-memory pool", tier: 'host' };
    case 'ssd':
      return { detail: "restored from the node's SSD pool", tier: 'ssd' };
    case 'host+ssd':
      return { detail: "restored from the node's host-memory and SSD pools", tier: 'host+ssd' };
    case 'peer':
      return { detail: `fetched from peer ${n.peerNode ?? 'node'} over gRPC`, ...(n.peerNode ? { otherNode: n.peerNode } : {}) };
    default:
      return {
        detail: `reused from base model ${n.droidspeak?.base} under a DroidSpeak plan (some layers recomputed; not counted as cached)`,
        otherModel: n.droidspeak?.base ?? '',
      };
  }
}

function missed(i: ExplainInput, c: number, key: string, tail: boolean): Omit<KvSegment, 'chunk' | 'start' | 'tokens' | 'key' | 'source'> {
  if (tail)
    return {
      reason: 'partial',
      detail:
        'the prompt ends inside this chunk: only whole chunks are kept and routed ' +
        'by key (a conversation tail is kept for its session when it ends)',
    };
  const r = i.routing[c];
  const drop = r?.drops.at(-1);
  if (drop) {
    const what = {
      evicted: `evicted from the ${drop.tier} tier`,
      expired: `expired from the ${drop.tier} tier`,
      corrupt: `a ${drop.tier} copy failed its checksum and was dropped`,
      truncated: `truncated in the ${drop.tier} tier`,
    }[drop.reason];
    return {
      reason: drop.reason,
      detail: `${what} by ${drop.policy} at ${when(drop.atUnixMs)}`,
      tier: drop.tier,
      policy: drop.policy,
      atUnixMs: drop.atUnixMs,
    };
  }
  if (!i.node)
    return { reason: 'node_record_missing', detail: `node ${i.nodeId} no longer has this request's record (it left or forgot it)` };
  const other = r?.heldBy.find((h) => h.nodeId !== i.nodeId);
  if (other) {
    return {
      reason: 'held_elsewhere',
      detail:
        `held on ${other.nodeId} (${other.tiers.join(', ')}), but the ${i.policy} policy ran ` +
        `it on ${i.nodeId} without fetching it (load, or moving it cost more than recomputing)`,
      otherNode: other.nodeId,
      tier: other.tiers[0] ?? '',
      policy: i.policy,
    };
  }
  const model = r?.otherModels[0];
  if (model)
    return {
      reason: 'model_mismatch',
      detail: `the same tokens are cached under model ${model}; KV is per model (no DroidSpeak plan applied)`,
      otherModel: model,
    };
  if (r?.otherTenantHeld && i.admin)
    return {
      reason: 'tenant_isolated',
      detail:
        "another tenant's copy of these tokens is cached; chunk keys are " +
        "salted per tenant so tenants never share (or probe) each other's KV",
    };
  return { reason: 'never_stored', detail: 'no node held this chunk for this tenant and model when the request was routed' };
}
