// Collects one request's TokenEvents from its reply inbox: the tokens, the time to the first
// event, and the cached prompt tokens the node reported. Shared by the cluster benchmarks.
import { createInbox } from '@nats-io/transport-node';
import { decodeMessage, TokenEventSchema } from '@mnemo/proto';

export function tokenStream(nc) {
  const inbox = createInbox();
  const sub = nc.subscribe(inbox);
  const t0 = performance.now();
  const result = { tokens: [], ttftMs: undefined, cachedTokens: 0 };
  const done = (async () => {
    for await (const m of sub) {
      const ev = decodeMessage(TokenEventSchema, m.data);
      result.ttftMs ??= performance.now() - t0;
      if (ev.usage) result.cachedTokens = ev.usage.cachedTokens;
      if (ev.error?.code) throw new Error(`${ev.error.code}: ${ev.error.message}`);
      result.tokens.push(...ev.tokens);
      if (ev.done) break;
    }
  })();
  return {
    inbox,
    t0,
    /** Waits for the last event (or the error one), then stops listening. */
    async finish() {
      await done;
      sub.unsubscribe();
      return result;
    },
  };
}
