import type { Schema } from '@mnemo/service-kit';

type Env = Readonly<Record<string, string | undefined>>;
// The reference engine (a real transformer) is the default; the sim engine is for cluster-scale runs.
export const isSim = (env: Env) => env.NODE_ENGINE?.trim() === 'sim';
export const isReference = (env: Env) => (env.NODE_ENGINE?.trim() || 'reference') === 'reference';

/** The engines' settings: the sim engine's cost model and the reference engine's backend. */
export const engineSchema = {
  NODE_SIM_DECODE_STEP_MS: { type: 'int', doc: 'sim engine: fixed cost of one decode step (ms)', default: 2, min: 0, when: isSim },
  NODE_SIM_PREFILL_TOKEN_US: { type: 'int', doc: 'sim engine: prefill cost per prompt token (µs)', default: 10, min: 0, when: isSim },
  NODE_SIM_DECODE_SEQ_US: { type: 'int', doc: 'sim engine: decode cost per sequence in the batch (µs)', default: 250, min: 0, when: isSim },
  NODE_SIM_DECODE_KCONTEXT_US: {
    type: 'int',
    doc: 'sim engine: decode cost per 1000 context tokens in the batch (µs)',
    default: 50,
    min: 0,
    when: isSim,
  },
  NODE_SIM_PREFILL_KCONTEXT_US: {
    type: 'int',
    doc: 'sim engine: prefill attention per computed token per 1000 tokens of context before it (µs; 0: prefill linear in its tokens)',
    default: 0,
    min: 0,
    when: isSim,
  },
  NODE_SIM_RESTORE_US_PER_CHUNK: {
    type: 'int',
    doc:
      'sim engine with KV bytes: modelled host → device (PCIe) copy of one restored 256-token chunk (µs); ' +
      "a restore's layers arrive no sooner than this link carries them (0: only the real copy's time)",
    default: 0,
    min: 0,
    when: isSim,
  },
  NODE_SIM_EOS_PER_MILLE: {
    type: 'int',
    doc: 'sim engine: chance per token (‰) that EOS is sampled',
    default: 0,
    min: 0,
    max: 1000,
    when: isSim,
  },
  NODE_SIM_KV_BYTES: {
    type: 'list',
    doc:
      'sim engine: real KV bytes (the node then runs its KV store, serves and pulls chunks like a reference node): off, ' +
      '<layers>x<rowElems> for every model, or model=<layers>x<rowElems> entries (float32 rows of kv_heads·head_dim)',
    default: ['off'],
    when: isSim,
  },
  NODE_SIM_MAX_CONTEXT: {
    type: 'int',
    doc: 'sim engine: context length of every model (default: the catalog’s, 4096)',
    min: 2,
    max: 1 << 20,
    when: isSim,
  },
  NODE_STEP_TRACE: {
    type: 'string',
    doc:
      'reference engine: append each forward step (kind, sequences, tokens, attended and context tokens, compute ms) ' +
      'to this file as JSON lines, for the twin’s engine calibration; unset: no trace',
    when: isReference,
  },
  NODE_REFERENCE_BACKEND: {
    type: 'enum',
    doc: 'reference engine: kernel backend',
    values: ['cpu', 'cuda'],
    default: 'cpu',
    when: isReference,
  },
} as const satisfies Schema;
