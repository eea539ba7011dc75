import { Distribution } from '../core/distribution.js';

/**
 * What the services add to the modelled compute and transfers on the live cluster: message
 * hops, timers and event-loop turns, and the CPU the processes spend per request. Each is
 * measured by `npm run twin -- calibrate` with a microbenchmark on this machine (never fitted
 * to an end-to-end TTFT); the twin draws the distributions with its seeded generator.
 */
export interface ServiceOverheads {
  /** One NATS message, publish to delivery (half a request/reply round trip), ms. */
  readonly natsMs: Distribution;
  /** How late a timer fires past its due time: every modelled wait of a sim engine call is one, ms. */
  readonly timerLagMs: Distribution;
  /** One turn of a node's event loop between iterations (setImmediate), ms. */
  readonly loopTurnMs: Distribution;
  /** Client and gateway side of one request per 1000 prompt tokens: chunk keys and encoding, ms. */
  readonly clientMsPerKToken: number;
  /** Scheduler CPU per request: decode, route, encode the dispatch, ms. */
  readonly scheduleMs: number;
  /** Node CPU per admitted request per 1000 prompt tokens: decode and the chunk-key check, ms. */
  readonly admitMsPerKToken: number;
  /** Node CPU to export one written chunk to the tiers (regenerate or copy out, checksum, queue), ms. */
  readonly exportMsPerChunk: number;
  /**
   * Node CPU of a prefill iteration outside the engine's modelled time (plan, block keys, sampling, events): per call and per 1000 prompt
   * tokens, ms.
   */
  readonly prefillCpuMs: number;
  readonly prefillCpuMsPerKToken: number;
  /** Node CPU of a decode iteration outside the engine's modelled time: per call and per sequence, ms. */
  readonly decodeCpuMs: number;
  readonly decodeCpuMsPerSeq: number;
  /**
   * The path of a request outside the node, timed whole (client, hops, scheduler, the dispatch's
   * decode and admission, the first token event back) on an idle cluster, ms. Where given it
   * replaces the sum of its parts for a request's first dispatch: the parts were timed apart and
   * leave out what happens between them.
   */
  readonly requestPathMs?: Distribution;
}

/** No overheads: the modelled hardware alone (capacity planning on dedicated machines). */
export const NO_OVERHEADS: ServiceOverheads = {
  natsMs: Distribution.constant(0),
  timerLagMs: Distribution.constant(0),
  loopTurnMs: Distribution.constant(0),
  clientMsPerKToken: 0,
  scheduleMs: 0,
  admitMsPerKToken: 0,
  exportMsPerChunk: 0,
  prefillCpuMs: 0,
  prefillCpuMsPerKToken: 0,
  decodeCpuMs: 0,
  decodeCpuMsPerSeq: 0,
};
