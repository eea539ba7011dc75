import type { KvRestorePlan } from '@mnemo/engine';
import type { StoredPrompt } from './kv.store.js';

/** What the batch scheduler asks of the KV store behind the device cache. */
export interface PromptStore {
  /** Planning estimate: the prompt position up to which the tiers could restore past `deviceTokens`. */
  restorableUntil(p: StoredPrompt, deviceTokens: number): number;
  /** A layer-wise restore of [deviceTokens, until), or undefined when the tiers hold nothing more. */
  restorePlan(p: StoredPrompt, deviceTokens: number): KvRestorePlan | undefined;
}

/** The store is off (NODE_KV_STORE=off, or an engine without KV bytes): only the device cache serves prefixes. */
export const NO_PROMPT_STORE: PromptStore = {
  restorableUntil: (_p, deviceTokens) => deviceTokens,
  restorePlan: () => undefined,
};

export const PROMPT_STORE = Symbol('PROMPT_STORE');
