import { CHUNK_TOKENS, chunkBlockKeys, type NodeSeq } from '@mnemo/kv-core';
import type { PrefillInput } from '@mnemo/engine';
import type { StoredPrompt } from '../kv-store/kv.store.js';
import type { Sequence } from '../shared/sequence.js';

/** The request's prompt as the KV store keys it, with the other nodes the scheduler says hold some of it. */
export function storedPrompt(s: Sequence): StoredPrompt {
  const sources = s.request.kvSources.map((k) => ({ nodeId: k.nodeId, address: k.grpcAddress, chunkKeys: k.chunkKeys }));
  return {
    model: s.request.model,
    chunkKeys: s.request.chunkKeys,
    promptTokens: s.request.tokens.length,
    blockKeys: (c) => blockKeysOf(s, c),
    ...(sources.length > 0 ? { sources } : {}),
  };
}

/** Block keys of one chunk of the prompt, hashed once per request (none when its chunk keys do not fit its tokens). */
function blockKeysOf(s: Sequence, chunk: number): readonly string[] {
  const r = s.request;
  if (r.chunkKeys.length !== Math.floor(r.tokens.length / CHUNK_TOKENS)) return [];
  let keys = s.blockKeys.get(chunk);
  if (!keys) s.blockKeys.set(chunk, (keys = chunkBlockKeys(r.model, r.tenant, r.tokens, r.chunkKeys, chunk)));
  return keys;
}

export function kvReuseOf(s: Sequence) {
  return s.kvReuse ? { kvReuse: { ...s.kvReuse } } : {};
}

/** What the engine needs to prefill a request; the tenant scopes its prefix-cache sharing. */
export function prefillInput(s: Sequence): PrefillInput {
  return {
    seqId: s.id,
    model: s.request.model,
    tokens: s.request.tokens,
    sampling: {
      temperature: s.request.sampling?.temperature ?? 1,
      topP: s.request.sampling?.topP || 1,
      seed: Number(s.request.sampling?.seed ?? 0n),
      // A failover continuation: the sampler goes on where the earlier attempt's stopped.
      drawOffset: s.request.sampling?.drawOffset ?? 0,
    },
    cacheSalt: s.request.tenant,
  };
}

/** The iteration policy's view of a sequence. */
export function nodeSeq(s: Sequence, swapped: boolean): NodeSeq {
  return {
    id: s.id,
    pool: s.request.model,
    priority: s.request.priority,
    arrivalSeq: s.arrivalSeq,
    phase: s.phase,
    paused: s.paused,
    streamed: s.streamed,
    preempted: s.preempted,
    swapped,
    promptTokens: s.request.tokens.length,
  };
}
