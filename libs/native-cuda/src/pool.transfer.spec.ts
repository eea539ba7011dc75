import { openHostPool, type HostPoolDevice } from './host-pool.device.js';
import type { KvGeometry } from './kernels/backend.interface.js';
import { kvChunkRanges, kvSegmentBytes } from './kv-chunk.ranges.js';
import { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
import { crc32cRanges, packCrcRanges, packTransferRanges, transfer, transferOperands } from './pool.transfer.js';
import { openSsdPool, type SsdPoolDevice } from './ssd-pool.device.js';
import { pattern, rejection, tempDir } from './testing/pool.fixtures.js';
import { crc32c } from './crc32c.js';
import { CpuKernelBackend } from './kernels/cpu-backend.js';
import { kernelCall } from './kernels/kernel.contract.js';

const MiB = 2 ** 20;
const geometry: KvGeometry = { numLayers: 4, numKvHeads: 2, headDim: 16, blockSize: 16 };
const BLOCKS_PER_CHUNK = 16;
const rowFloats = geometry.numKvHeads * geometry.headDim;
const planeFloats = geometry.blockSize * rowFloats;
const blockFloats = geometry.numLayers * 2 * planeFloats;

/** A device cache `[block][layer][K|V][token][kv_head][head_dim]` of random bit patterns (NaNs included). */
function deviceCache(blocks: number, seed: number): Float32Array {
  const bytes = pattern(blocks * blockFloats * 4, seed);
  return new Float32Array(bytes.buffer);
}

/** The payload of one layer, `[K|V][token][kv_head][head_dim]`, built in plain JS. */
function referenceSegment(cache: Float32Array, blocks: number[], layer: number, tokens: number): Uint32Array {
  const out = new Uint32Array(2 * tokens * rowFloats);
  const bits = new Uint32Array(cache.buffer, cache.byteOffset, cache.length);
  for (let kv = 0; kv < 2; kv++) {
    for (let t = 0; t < tokens; t++) {
      const block = blocks[Math.floor(t / geometry.blockSize)]!;
      const from = ((block * geometry.numLayers + layer) * 2 + kv) * planeFloats + (t % geometry.blockSize) * rowFloats;
      out.set(bits.subarray(from, from + rowFloats), (kv * tokens + t) * rowFloats);
    }
  }
  return out;
}

function u32(bytes: Uint8Array | Float32Array): Uint32Array {
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

describe(transfer.name, () => {
  let dir: ReturnType<typeof tempDir>;
  const open: Array<HostPoolDevice | SsdPoolDevice> = [];
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((d) => d.close()));
    dir.remove();
  });
  const track = <T extends HostPoolDevice | SsdPoolDevice>(d: T): T => {
    open.push(d);
    return d;
  };

  it('moves a chunk device cache → host pool → SSD → host pool → device cache bit-exactly, CRCs fused', async () => {
    const cache = deviceCache(40, 1);
    const blocks = [7, 3, 30, 12, 0, 39, 21, 5, 18, 26, 9, 33, 1, 14, 27, 36];
    const seg = kvSegmentBytes(geometry, blocks.length * geometry.blockSize);
    const host = track(await openHostPool({ bytes: 4 * MiB }));
    const ssd = track(await openSsdPool({ path: dir.file('pool.bin'), bytes: 8 * MiB, blockSize: 4096 }));
    const layers = Array.from({ length: geometry.numLayers }, (_, l) => l);
    const hostAt = (l: number): number => 8192 + l * seg;
    const ssdAt = (l: number): number => MiB + (geometry.numLayers - 1 - l) * seg;
    const layerCrcs = (operand: number, at: (l: number) => number): Float64Array =>
      packCrcRanges(layers.map((l) => ({ operand, offset: at(l), length: seg })));

    // Offload: gather into the host pool, then write through to the SSD.
    const gather = kvChunkRanges({
      geometry,
      cache: { operand: 0 },
      blocks,
      segments: layers.map((l) => ({ operand: 1, offset: hostAt(l) })),
      direction: 'gather',
    });
    const put = await transfer([cache, host], gather, { crcs: layerCrcs(1, hostAt) });
    expect(put.fusedCrcs).toBe(geometry.numLayers);
    const toSsd = packTransferRanges(layers.map((l) => ({ src: 0, srcOffset: hostAt(l), dst: 1, dstOffset: ssdAt(l), length: seg })));
    expect((await transfer([host, ssd], toSsd, { crcs: layerCrcs(0, hostAt) })).crcs).toEqual(put.crcs);

    // The payload is layer-major, exactly as a plain JS gather lays it out.
    const staged = new Uint8Array(seg * geometry.numLayers);
    const read = packTransferRanges(layers.map((l) => ({ src: 0, srcOffset: ssdAt(l), dst: 1, dstOffset: l * seg, length: seg })));
    const back = await transfer([ssd, staged], read, { crcs: layerCrcs(1, (l) => l * seg) });
    expect(back.crcs).toEqual(put.crcs);
    for (const l of layers) {
      expect(u32(staged.subarray(l * seg, (l + 1) * seg))).toEqual(referenceSegment(cache, blocks, l, blocks.length * geometry.blockSize));
    }

    // Restore into other blocks of a fresh cache, verifying the CRCs over the sources.
    const cache2 = new Float32Array(cache.length);
    const blocks2 = blocks.map((b) => (b + 11) % 40);
    const scatter = kvChunkRanges({
      geometry,
      cache: { operand: 0 },
      blocks: blocks2,
      segments: layers.map((l) => ({ operand: 1, offset: l * seg })),
      direction: 'scatter',
    });
    const got = await transfer([cache2, staged], scatter, { crcs: layerCrcs(1, (l) => l * seg) });
    expect(got.fusedCrcs).toBe(geometry.numLayers);
    expect(got.crcs).toEqual(put.crcs);
    blocks.forEach((b, i) => {
      const from = u32(cache.subarray(b * blockFloats, (b + 1) * blockFloats));
      const to = u32(cache2.subarray(blocks2[i]! * blockFloats, (blocks2[i]! + 1) * blockFloats));
      expect(to).toEqual(from);
    });
  });

  it('gathers a partial chunk and a subset of layers (a layer-wise load)', async () => {
    const cache = deviceCache(8, 2);
    const blocks = [5, 2, 7];
    const tokens = 2 * geometry.blockSize + 5;
    const seg = kvSegmentBytes(geometry, tokens);
    const out = new Uint8Array(2 * seg);
    const ranges = kvChunkRanges({
      geometry,
      cache: { operand: 0 },
      blocks,
      tokens,
      layers: { start: 1, end: 3 },
      segments: [
        { operand: 1, offset: 0 },
        { operand: 1, offset: seg },
      ],
      direction: 'gather',
    });
    expect(ranges.length / 5).toBe(2 * 2 * blocks.length);
    await transfer([cache, out], ranges);
    expect(u32(out.subarray(0, seg))).toEqual(referenceSegment(cache, blocks, 1, tokens));
    expect(u32(out.subarray(seg))).toEqual(referenceSegment(cache, blocks, 2, tokens));
  });

  it('reads one request striped 3:1 over two SSD pools in one call', async () => {
    const a = track(await openSsdPool({ path: dir.file('a.bin'), bytes: 4 * MiB, blockSize: 4096 }));
    const b = track(await openSsdPool({ path: dir.file('b.bin'), bytes: 4 * MiB, blockSize: 4096 }));
    const seg = 64 * 1024;
    const data = pattern(16 * seg, 3);
    // Placement is the policy's decision; here every fourth segment goes to the slower device.
    const place = Array.from({ length: 16 }, (_, i) =>
      i % 4 === 3 ? { dev: 2, at: Math.floor(i / 4) * seg } : { dev: 1, at: (i - Math.floor(i / 4)) * seg },
    );
    await transfer(
      [data, a, b],
      packTransferRanges(place.map((p, i) => ({ src: 0, srcOffset: i * seg, dst: p.dev, dstOffset: p.at, length: seg }))),
    );
    const back = new Uint8Array(data.length);
    const before = [a.stats().bytesRead, b.stats().bytesRead];
    const r = await transfer(
      [back, a, b],
      packTransferRanges(place.map((p, i) => ({ src: p.dev, srcOffset: p.at, dst: 0, dstOffset: i * seg, length: seg }))),
      {
        crcs: packCrcRanges([{ operand: 0, offset: 0, length: back.length }]),
      },
    );
    expect(Buffer.compare(back, data)).toBe(0);
    expect([a.stats().bytesRead - before[0]!, b.stats().bytesRead - before[1]!]).toEqual([12 * seg, 4 * seg]);
    expect(r.crcs[0]).toBe(crc32c(data));
    expect(r.fusedCrcs).toBe(1);
  });

  it('checksums ranges nothing tiles in a second pass, and ranges alone', async () => {
    const data = pattern(3 * MiB + 7, 4);
    const dst = new Uint8Array(data.length);
    const r = await transfer([data, dst], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: data.length }]), {
      crcs: packCrcRanges([
        { operand: 1, offset: 1, length: MiB },
        { operand: 0, offset: 0, length: 0 },
      ]),
    });
    expect(r.fusedCrcs).toBe(0);
    expect([...r.crcs]).toEqual([crc32c(data.subarray(1, MiB + 1)), 0]);
    expect([...(await crc32cRanges([data], packCrcRanges([{ operand: 0, offset: 5, length: 1000 }])))]).toEqual([
      crc32c(data.subarray(5, 1005)),
    ]);
  });

  it('on the compute lane: the same bytes and CRCs, and it runs after the kernels queued before it', async () => {
    const cache = deviceCache(40, 2);
    const blocks = [7, 3, 30, 12, 0, 39, 21, 5, 18, 26, 9, 33, 1, 14, 27, 36];
    const seg = kvSegmentBytes(geometry, blocks.length * geometry.blockSize);
    const host = track(await openHostPool({ bytes: 4 * MiB }));
    const crcs = packCrcRanges(Array.from({ length: geometry.numLayers }, (_, l) => ({ operand: 1, offset: l * seg, length: seg })));
    const segments = Array.from({ length: geometry.numLayers }, (_, l) => ({ operand: 1, offset: l * seg }));
    const gather = kvChunkRanges({ geometry, cache: { operand: 0 }, blocks, segments, direction: 'gather' });
    const put = await transfer([cache, host], gather, { crcs });
    const scatter = kvChunkRanges({ geometry, cache: { operand: 0 }, blocks, segments, direction: 'scatter' });
    const viaCopy = new Float32Array(cache.length);
    const viaCompute = new Float32Array(cache.length);
    const a = await transfer([viaCopy, host], scatter, { crcs });
    const b = await transfer([viaCompute, host], scatter, { crcs, lane: 'compute' });
    expect([...b.crcs]).toEqual([...put.crcs]);
    expect(b.fusedCrcs).toBe(geometry.numLayers);
    expect([...a.crcs]).toEqual([...put.crcs]);
    expect(u32(viaCompute)).toEqual(u32(viaCopy));

    // Queued behind a kernel batch that writes its source: it copies what the kernels wrote.
    const kernels = new CpuKernelBackend();
    const n = 1 << 22;
    const x = new Float32Array(n).fill(1);
    const out = new Float32Array(n);
    const calls = Array.from({ length: 8 }, () => kernelCall('add', x, x, x, n));
    const ran = kernels.submit(calls);
    const copied = transfer([x, out], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: 4 * n }]), {
      lane: 'compute',
    });
    await Promise.all([ran, copied]);
    expect(out[0]).toBe(256);
    expect(out[n - 1]).toBe(256);

    const ssd = track(await openSsdPool({ path: dir.file('c.bin'), bytes: MiB }));
    const err = await rejection(
      transfer([ssd, new Uint8Array(4096)], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: 4096 }]), {
        lane: 'compute',
      }),
    );
    expect(err).toBeInstanceOf(RangeError);
    expect(err.code).toBe(ValidationCode.InvalidArgValue);
    const lane = await rejection(transfer([new Uint8Array(8)], new Float64Array(0), { lane: 'gpu' as never }));
    expect(lane).toBeInstanceOf(RangeError);
  });

  describe('refuses malformed calls before moving anything', () => {
    const mem = (): Uint8Array => new Uint8Array(8192);
    const one = (src: number, srcOffset: number, dst: number, dstOffset: number, length: number): Float64Array =>
      packTransferRanges([{ src, srcOffset, dst, dstOffset, length }]);
    it.each([
      ['operands is not an array', () => transfer('x' as never, new Float64Array(0)), TypeError, ValidationCode.InvalidArgType],
      ['an operand is a number', () => transfer([3 as never], new Float64Array(0)), TypeError, ValidationCode.InvalidArgType],
      [
        'an operand views shared memory',
        () => transfer([new Uint8Array(new SharedArrayBuffer(8))], new Float64Array(0)),
        TypeError,
        ValidationCode.InvalidArgType,
      ],
      ['ranges is a plain array', () => transfer([mem()], [0, 0, 0, 0, 0] as never), TypeError, ValidationCode.InvalidArgType],
      ['ranges is not rows of 5', () => transfer([mem()], new Float64Array(4)), RangeError, ValidationCode.InvalidArgValue],
      ['a field is negative', () => transfer([mem(), mem()], one(0, -1, 1, 0, 1)), RangeError, ValidationCode.OutOfRange],
      ['a field is fractional', () => transfer([mem(), mem()], one(0, 0, 1, 0, 1.5)), RangeError, ValidationCode.OutOfRange],
      ['a field is NaN', () => transfer([mem(), mem()], one(0, NaN, 1, 0, 1)), RangeError, ValidationCode.OutOfRange],
      ['an operand index is out of range', () => transfer([mem()], one(0, 0, 1, 0, 1)), RangeError, ValidationCode.OutOfRange],
      ['a source runs past its end', () => transfer([mem(), mem()], one(0, 8000, 1, 0, 200)), RangeError, ValidationCode.OutOfRange],
      [
        'crcs is not a Float64Array',
        () => transfer([mem()], new Float64Array(0), { crcs: [0, 0, 1] as never }),
        TypeError,
        ValidationCode.InvalidArgType,
      ],
      [
        'a crc runs past its end',
        () => transfer([mem()], new Float64Array(0), { crcs: packCrcRanges([{ operand: 0, offset: 8000, length: 500 }]) }),
        RangeError,
        ValidationCode.OutOfRange,
      ],
    ])('%s', async (_name, call, type, code) => {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(type);
      expect(err.code).toBe(code);
    });

    it('SSD to SSD, CRCs over an SSD pool and ranges past a device end', async () => {
      const a = track(await openSsdPool({ path: dir.file('a.bin'), bytes: MiB }));
      const b = track(await openSsdPool({ path: dir.file('b.bin'), bytes: MiB }));
      const cases: Array<[Promise<unknown>, ValidationCode]> = [
        [transfer([a, b], one(0, 0, 1, 0, 4096)), ValidationCode.InvalidArgValue],
        [
          transfer([a], new Float64Array(0), { crcs: packCrcRanges([{ operand: 0, offset: 0, length: 4096 }]) }),
          ValidationCode.InvalidArgValue,
        ],
        [transfer([a, mem()], one(0, MiB - 4096, 1, 0, 8192)), ValidationCode.OutOfRange],
      ];
      for (const [call, code] of cases) {
        const err = await rejection(call);
        expect(err).toBeInstanceOf(RangeError);
        expect(err.code).toBe(code);
      }
      expect(a.stats().requests + b.stats().requests).toBe(0);
    });

    it('overlapping writes, even through aliasing views, with code range_conflict', async () => {
      const buf = new ArrayBuffer(8192);
      const dst = new Uint8Array(buf);
      const alias = new Uint8Array(buf, 4096);
      const src = pattern(8192, 5);
      const err = await rejection(
        transfer(
          [src, dst, alias],
          packTransferRanges([
            { src: 0, srcOffset: 0, dst: 1, dstOffset: 4096, length: 100 },
            { src: 0, srcOffset: 0, dst: 2, dstOffset: 50, length: 100 },
          ]),
        ),
      );
      expect(err).toBeInstanceOf(NativeError);
      expect(err.code).toBe(NativeErrorCode.RangeConflict);
      expect(dst.every((x) => x === 0)).toBe(true);
      expect(err.stack).toContain('pool.transfer.spec');
    });

    it('a closed host pool with code closed', async () => {
      const host = await openHostPool({ bytes: MiB });
      await host.close();
      const err = await rejection(transfer([host, mem()], one(0, 0, 1, 0, 16)));
      expect(err).toBeInstanceOf(NativeError);
      expect(err.code).toBe(NativeErrorCode.Closed);
    });
  });
});

describe(kvChunkRanges.name, () => {
  const base = {
    geometry,
    cache: { operand: 0 },
    blocks: [1, 2],
    segments: [0, 1, 2, 3].map((l) => ({ operand: 1, offset: l * 1000 })),
    direction: 'gather' as const,
  };
  it.each([
    ['segments do not match the layers', { ...base, segments: [] }, ValidationCode.InvalidArgValue],
    ['tokens leave the last block empty', { ...base, tokens: 16 }, ValidationCode.InvalidArgValue],
    ['tokens exceed the blocks', { ...base, tokens: 33 }, ValidationCode.OutOfRange],
    ['a block id is negative', { ...base, blocks: [1, -2] }, ValidationCode.OutOfRange],
    ['the layer range is reversed', { ...base, layers: { start: 3, end: 1 } }, ValidationCode.OutOfRange],
    ['the direction is unknown', { ...base, direction: 'sideways' as never }, ValidationCode.InvalidArgValue],
  ])('throws when %s', (_name, args, code) => {
    let caught: unknown;
    try {
      kvChunkRanges(args);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RangeError);
    expect((caught as { code: string }).code).toBe(code);
  });

  it('builds one range per layer, K|V and block', () => {
    expect(kvChunkRanges(base).length).toBe(4 * 2 * 2 * 5);
    expect(kvSegmentBytes(geometry, BLOCKS_PER_CHUNK * geometry.blockSize)).toBe(2 * 256 * rowFloats * 4);
  });
});

describe(transferOperands.name, () => {
  it.each<[string, string[], string[], number[]]>([
    ['each operand once, in order of first use', [], ['a', 'b', 'a', 'c'], [0, 1, 0, 2]],
    ['those named first take the first indices', ['x'], ['a', 'x', 'a'], [1, 0, 1]],
  ])('%s', (_name, first, uses, indices) => {
    const ops = new Map<string, ArrayBuffer>();
    const buf = (name: string) => ops.get(name) ?? ops.set(name, new ArrayBuffer(8)).get(name)!;
    const { operands, op } = transferOperands(...first.map(buf));
    expect(uses.map((u) => op(buf(u)))).toEqual(indices);
    expect(operands.length).toBe(new Set([...first, ...uses]).size);
  });
});
