import { SWAP_IN_MODES } from '@mnemo/kv-core';
import type { Schema } from '@mnemo/service-kit';

/** Iteration planning: priorities, fairness, preemption and swaps (FastSwitch). */
export const schedulingSchema = {
  NODE_SCHEDULING: {
    type: 'enum',
    doc:
      'iteration planning: fcfs (priority then arrival, preempt only for memory) or ' +
      'priority (FastSwitch: the best-ranked that fit run, others are preempted; ranks age)',
    values: ['fcfs', 'priority'],
    default: 'fcfs',
  },
  NODE_HOLD_LONG_PROMPTS: {
    type: 'enum',
    doc:
      'fcfs: a prompt that computes more than a chunk and more than the prefill pass has admitted so far leads the next ' +
      'pass instead, so shorter prompts queued with it do not wait for its compute (off: strict arrival order)',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_PRIORITY_UPDATE_EVERY: {
    type: 'int',
    doc: 'priority scheduling: iterations between rank updates',
    default: 4,
    min: 1,
    max: 1_000_000,
  },
  NODE_FAIRNESS_AGING_ITERATIONS: {
    type: 'int',
    doc: 'priority scheduling: iterations a left-out sequence waits per priority level gained (0: no aging)',
    default: 32,
    min: 0,
  },
  NODE_FAIRNESS_TOKENS_PER_LEVEL: {
    type: 'int',
    doc: 'priority scheduling: tokens served per priority level lost (0: no token-count fairness)',
    default: 0,
    min: 0,
  },
  NODE_PREEMPTION: {
    type: 'enum',
    doc:
      'how a preempted sequence keeps its KV: swap (copied to host memory ' +
      'and back; reference engine on cpu, else recompute) or recompute',
    values: ['swap', 'recompute'],
    default: 'swap',
  },
  NODE_SWAP_IN: {
    type: 'enum',
    doc:
      'swap preemption: adaptive (asynchronous when a copy would stall an iteration with others to run, ' +
      'FastSwitch Algorithm 1), sync (always wait) or async (never wait while others run; for experiments)',
    values: SWAP_IN_MODES,
    default: 'adaptive',
  },
  NODE_SWAP_SPACE_MB: { type: 'int', doc: 'swap preemption: host memory for swapped-out KV per model (MiB)', default: 256, min: 1 },
  NODE_BLOCK_GROUP_BLOCKS: {
    type: 'int',
    doc: "swap preemption: blocks of a sequence's first block group (0: no block groups)",
    default: 60,
    min: 0,
    max: 1 << 20,
  },
} as const satisfies Schema;
