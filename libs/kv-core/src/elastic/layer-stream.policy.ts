/**
 * When a context is served through the layer stream cache (SwiftCache §3.2–3.3) instead of the
 * device cache, and what starting one takes. Units are full-layer KV blocks of the model (16
 * tokens, every layer): a streamed context of `C` blocks keeps `window` layer planes of all its
 * blocks on the device — `⌈C·W/L⌉` full blocks' worth — and its full-layer KV in backing blocks,
 * device blocks first (the model's own cache, lent units included) and the host pool after.
 * This is Eq. 3–5 with a window of `W` layers and a host pool behind the device.
 */
export interface LayerStreamShape {
  /** Layers of the model (L). */
  readonly layers: number;
  /** Resident layer planes (W ≥ 2: the active layer and the one being loaded). */
  readonly window: number;
}

/** Device memory the planes of a `contextBlocks` stream take, in full blocks: ⌈C·W/L⌉. */
export function streamPlaneBlocks(shape: LayerStreamShape, contextBlocks: number): number {
  return Math.ceil((contextBlocks * shape.window) / shape.layers);
}

/**
 * The longest context (blocks) one streamed sequence could hold with `deviceBlocks` of the
 * model's cache and `hostBlocks` of host pool: the largest C with planes + backing fitting
 * (`⌈C·W/L⌉ + C ≤ device + host`) and the planes on the device (`⌈C·W/L⌉ ≤ device`). 0: none.
 */
export function layerStreamLimit(shape: LayerStreamShape, deviceBlocks: number, hostBlocks: number): number {
  checkShape(shape);
  if (deviceBlocks <= 0) return 0;
  const { layers: L, window: W } = shape;
  let c = Math.min(Math.floor(((deviceBlocks + hostBlocks) * L) / (L + W)), Math.floor((deviceBlocks * L) / W));
  // The floors above can overshoot the ceiling of the plane count by one block at most.
  while (c > 0 && streamPlaneBlocks(shape, c) + c > deviceBlocks + hostBlocks) c--;
  return Math.max(0, c);
}

/** How an admitted context is served. */
export type ContextRoute = 'device' | 'stream';

/**
 * Device when the whole context fits the model's device cache (after elastic borrowing), the
 * layer stream when it fits what the stream can hold, else null (the request is refused).
 */
export function routeContext(needBlocks: number, deviceLimitBlocks: number, streamLimitBlocks: number): ContextRoute | null {
  if (needBlocks <= deviceLimitBlocks) return 'device';
  if (needBlocks <= streamLimitBlocks) return 'stream';
  return null;
}

/** What starting a streamed context takes now: plane memory and backing blocks per place. */
export interface StreamStartPlan {
  readonly planeBlocks: number;
  readonly deviceBacking: number;
  readonly hostBacking: number;
}

/**
 * The blocks a stream of `contextBlocks` takes if it starts now, with `freeDevice` blocks of the
 * model's cache available and `freeHost` blocks of host pool; null when it does not fit yet.
 * Device backing is preferred (a lender's or the model's own memory is faster than the host).
 */
export function planStreamStart(
  shape: LayerStreamShape,
  contextBlocks: number,
  freeDevice: number,
  freeHost: number,
): StreamStartPlan | null {
  checkShape(shape);
  if (!Number.isInteger(contextBlocks) || contextBlocks <= 0)
    throw new RangeError(`a streamed context needs a positive block count, got ${contextBlocks}`);
  const planeBlocks = streamPlaneBlocks(shape, contextBlocks);
  if (planeBlocks > freeDevice) return null;
  const deviceBacking = Math.min(contextBlocks, freeDevice - planeBlocks);
  const hostBacking = contextBlocks - deviceBacking;
  return hostBacking > freeHost ? null : { planeBlocks, deviceBacking, hostBacking };
}

function checkShape({ layers, window }: LayerStreamShape): void {
  if (!Number.isInteger(layers) || layers <= 0) throw new RangeError(`layers must be a positive integer, got ${layers}`);
  if (!Number.isInteger(window) || window < 2 || window > layers) throw new RangeError(`window must be in [2, ${layers}], got ${window}`);
}
