// A host write-through cut into parts (TierWriter): each part's SSD write-behind starts as soon as
// it lands in host memory, while the copy threads work on the next.
import type { DeviceWrite } from '@mnemo/kv-core';

/** Segments per part of a host write-through (its SSD writes start as each part lands). */
export const HOST_PART_SEGMENTS = 64;

/**
 * Segments of the first part: it lands (and its SSD writes start) after a quarter of the copy a
 * full part takes, while the parts after it stay large (each costs a native call and a pass of
 * bookkeeping on the event loop).
 */
export const HOST_FIRST_PART_SEGMENTS = 16;

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
