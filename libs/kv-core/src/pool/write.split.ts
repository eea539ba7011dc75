import type { DeviceWrite } from './offload.planner.js';

/**
 * A plan cut into parts of at most `max` segments per device (the first at most `first`), in
 * plan order (layer-major), each part's extents its own segments' strides; the plan whole when
 * `max` <= 0 or an extent holds more than its segments (its slack would be lost if a part failed).
 */
export function splitWrites<S>(writes: readonly DeviceWrite<S>[], max: number, stride: number, first = max): DeviceWrite<S>[][] {
  const exact = writes.every((w) => w.extents.reduce((n, x) => n + x.length, 0) === w.segments.length * stride);
  if (max <= 0 || !exact) return [[...writes]];
  const parts: DeviceWrite<S>[][] = [];
  for (let from = 0, size = Math.max(1, Math.min(first, max)); writes.some((w) => w.segments.length > from); from += size, size = max) {
    parts.push(
      writes
        .filter((w) => w.segments.length > from)
        .map((w) => {
          const offsets = w.offsets.slice(from, from + size);
          return {
            ...w,
            segments: w.segments.slice(from, from + size),
            offsets,
            extents: offsets.map((offset) => ({ offset, length: stride })),
          };
        }),
    );
  }
  return parts;
}
