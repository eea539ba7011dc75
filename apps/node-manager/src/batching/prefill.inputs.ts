import type { Engine, PrefillInput } from '@mnemo/engine';
import type { JsonLogger } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import type { CrossModelPort } from '../droidspeak/cross-model.reuse.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { KvRecorderPort } from '../why/kv.recorder.js';
import type { Sequence } from '../shared/sequence.js';
import { prefillInput, storedPrompt } from './sequence.inputs.js';

/** What a new request's prefill reads besides its tokens: the KV store, a cross-model plan, the why recorder. */
export interface PrefillSources {
  readonly config: NodeManagerConfig;
  readonly engine: Engine;
  readonly kvStore: PromptStore;
  readonly crossModel: CrossModelPort;
  readonly recorder: KvRecorderPort;
  readonly logger: JsonLogger;
}

/** The engine's input for each new request, and the warm start of its restore while it waits. */
export class PrefillInputs {
  constructor(private readonly s: PrefillSources) {}

  /** Device prefix first, then whatever the KV store can restore (and the cross-model plan, the E-cache capture). */
  of(seq: Sequence): PrefillInput {
    const s = this.s;
    if (s.config.NODE_PREFIX_CACHE === 'off') return { ...prefillInput(seq), cacheSalt: undefined };
    const crossModel = s.crossModel.crossModelFor(seq);
    const captureE = s.crossModel.captureFor?.(seq);
    return {
      ...prefillInput(seq),
      restore: (deviceTokens) => {
        const plan = s.recorder.restore(seq, s.kvStore.restorePlan(storedPrompt(seq), deviceTokens, seq.id), deviceTokens);
        // Where the restore reads from: the node's cost meter prices its pass with it.
        seq.restored = plan?.sources?.();
        return plan;
      },
      ...(crossModel ? { crossModel } : {}),
      ...(captureE ? { captureE } : {}),
    };
  }

  /**
   * What a pass about to start expects of this request: its prompt and the tokens it should find on
   * the device or restore (the same estimate admission planned with), for the heartbeat's prefillBusyMs.
   */
  expected(seq: Sequence): { promptTokens: number; cachedTokens: number } {
    const s = this.s;
    const promptTokens = seq.request.tokens.length;
    if (s.config.NODE_PREFIX_CACHE === 'off' || seq.streamed) return { promptTokens, cachedTokens: 0 };
    const input = prefillInput(seq);
    const device = input.cacheSalt === undefined ? 0 : s.engine.cachedTokens(input);
    return { promptTokens, cachedTokens: Math.max(device, s.kvStore.restorableUntil(storedPrompt(seq), device)) };
  }

  /**
   * A request has arrived: while it waits for its pass, the store starts reading from SSD what
   * its restore will need (the device prefix as it stands now; a pass that finds it changed
   * plans afresh). Never fails the admission.
   */
  warm(seq: Sequence): void {
    const s = this.s;
    if (!s.kvStore.warm || seq.streamed || s.config.NODE_PREFIX_CACHE === 'off') return;
    try {
      const input = prefillInput(seq);
      if (input.cacheSalt === undefined) return;
      s.kvStore.warm(seq.id, storedPrompt(seq), s.engine.cachedTokens(input));
    } catch (e) {
      s.logger.emit('warn', 'KV restore not warmed', { requestId: seq.id, err: e instanceof Error ? e : String(e) });
    }
  }
}
