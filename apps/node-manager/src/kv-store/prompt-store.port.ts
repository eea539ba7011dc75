import type { KvRestorePlan } from '@mnemo/engine';
import type { StoredPrompt } from './stored.prompt.js';

/** What the batch scheduler asks of the KV store behind the device cache. */
export interface PromptStore {
  /** Planning estimate: the prompt position up to which the tiers could restore past `deviceTokens`. */
  restorableUntil(p: StoredPrompt, deviceTokens: number): number;
  /**
   * A layer-wise restore of [deviceTokens, until), or undefined when the tiers hold nothing more.
   * With `requestId`, a restore {@link warm} started for that request is taken over when it
   * covers the same positions.
   */
  restorePlan(p: StoredPrompt, deviceTokens: number, requestId?: string): KvRestorePlan | undefined;
  /**
   * The request has arrived and waits for its pass: start reading what its restore will read
   * (from SSD into the host pool), so the reads land during the wait instead of inside the pass.
   */
  warm?(requestId: string, p: StoredPrompt, deviceTokens: number): void;
  /** The request is gone (finished, cancelled, or failed before its pass): let its warm restore go. */
  cool?(requestId: string): void;
}

/** The store is off (NODE_KV_STORE=off, or an engine without KV bytes): only the device cache serves prefixes. */
export const NO_PROMPT_STORE: PromptStore = {
  restorableUntil: (_p, deviceTokens) => deviceTokens,
  restorePlan: () => undefined,
};

export const PROMPT_STORE = Symbol('PROMPT_STORE');
