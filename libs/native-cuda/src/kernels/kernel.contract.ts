import type { AttentionBatch, KvGeometry } from './kv-geometry.js';
import { checkArgs } from './kernel-args.validator.js';

/**
 * The kernel contract, declared once: for every op, its arguments as `name:kind` and the
 * rule that checks them. From this table come the addon's raw typing ({@link RawKernels}),
 * the calls a kernel list may hold ({@link KernelCall}), the checks every backend runs
 * before a call ({@link validateCall}) and the flattening of geometry and batches into the
 * addon's positional arguments ({@link encodeCall}). The C++ binding
 * (src/native/binding/kernels_*.binding.cc) keys its op table by these names and re-checks
 * as an assertion. Shapes and semantics are documented on {@link KernelBackend}.
 *
 * Kinds: `tensor` (the backend's tensor: Float32Array on cpu, a device tensor on cuda),
 * `int32` (a host Int32Array), `size` and `number` (JS numbers), `geom` (KvGeometry, four
 * numbers on the wire), `batch` (AttentionBatch, five values on the wire). Check functions
 * see tensors as element counts, so both backends run the very same rules.
 */
export const KERNEL_CONTRACT = {
  embedding: { args: ['out:tensor', 'table:tensor', 'ids:int32', 'dim:size'], check: checkArgs.embedding },
  rmsnorm: { args: ['out:tensor', 'x:tensor', 'weight:tensor', 'rows:size', 'dim:size', 'eps:number'], check: checkArgs.rmsnorm },
  matmul: { args: ['out:tensor', 'x:tensor', 'w:tensor', 'm:size', 'n:size', 'k:size'], check: checkArgs.matmul },
  matmulPacked: { args: ['out:tensor', 'x:tensor', 'w:tensor', 'm:size', 'n:size', 'k:size'], check: checkArgs.matmul },
  packWeight: { args: ['out:tensor', 'w:tensor', 'n:size', 'k:size'], check: checkArgs.packWeight },
  rope: { args: ['x:tensor', 'positions:int32', 'rows:size', 'numHeads:size', 'headDim:size', 'theta:number'], check: checkArgs.rope },
  siluMul: { args: ['out:tensor', 'gate:tensor', 'up:tensor', 'n:size'], check: checkArgs.elementwise },
  add: { args: ['out:tensor', 'a:tensor', 'b:tensor', 'n:size'], check: checkArgs.elementwise },
  addBias: { args: ['out:tensor', 'x:tensor', 'bias:tensor', 'rows:size', 'n:size'], check: checkArgs.addBias },
  writeKv: { args: ['cache:tensor', 'k:tensor', 'v:tensor', 'slots:int32', 'layer:size', 'geom:geom'], check: checkArgs.writeKv },
  pagedAttention: {
    args: ['out:tensor', 'q:tensor', 'cache:tensor', 'layer:size', 'numHeads:size', 'geom:geom', 'batch:batch', 'scale:number'],
    check: checkArgs.pagedAttention,
  },
  copyBlocks: { args: ['cache:tensor', 'src:int32', 'dst:int32', 'geom:geom'], check: checkArgs.copyBlocks },
  argmax: { args: ['out:int32', 'x:tensor', 'rows:size', 'n:size'], check: checkArgs.argmax },
  softmax: { args: ['out:tensor', 'x:tensor', 'rows:size', 'n:size', 'scale:number'], check: checkArgs.softmax },
} as const;

export type KernelOp = keyof typeof KERNEL_CONTRACT;
type Kinds<Op extends KernelOp> = (typeof KERNEL_CONTRACT)[Op]['args'];
type KindOf<S> = S extends `${string}:${infer K}` ? K : never;
type ArgType<K, T> = K extends 'tensor'
  ? T
  : K extends 'int32'
    ? Int32Array
    : K extends 'geom'
      ? KvGeometry
      : K extends 'batch'
        ? AttentionBatch
        : number;

type Geom4 = [numLayers: number, numKvHeads: number, headDim: number, blockSize: number];
type Batch5 = [numSeqs: number, queryStart: Int32Array, contextLen: Int32Array, blockTables: Int32Array, maxBlocksPerSeq: number];
type Wire<K, T> = K extends 'geom' ? Geom4 : K extends 'batch' ? Batch5 : [ArgType<K, T>];
type Flatten<L extends readonly unknown[], T> = L extends readonly [infer H, ...infer R] ? [...Wire<KindOf<H>, T>, ...Flatten<R, T>] : [];

/** The arguments of `op` as backends take them: `T` is the backend's tensor type. */
export type KernelArgs<Op extends KernelOp, T> = MapArgs<Kinds<Op>, T>;
type MapArgs<L extends readonly unknown[], T> = L extends readonly [infer H, ...infer R] ? [ArgType<KindOf<H>, T>, ...MapArgs<R, T>] : [];
/** The same arguments on the wire to the addon, tensors as `W`. */
export type WireArgs<Op extends KernelOp, W> = Flatten<Kinds<Op>, W>;

/** The addon's raw functions (unvalidated), typed from the table. */
export type RawKernels<W> = { [Op in KernelOp]: (...args: WireArgs<Op, W>) => void };

/** Ops a kernel list may hold: everything that writes its outputs in place. */
export type ListOp = Exclude<KernelOp, 'argmax'>;
/** One entry of a kernel list ({@link KernelBackend.submit}). */
export type KernelCall<T> = { [Op in ListOp]: { readonly op: Op; readonly args: KernelArgs<Op, T> } }[ListOp];

/** Builds a list entry with its argument types checked against the contract. */
export function kernelCall<Op extends ListOp, T>(op: Op, ...args: KernelArgs<Op, T>): KernelCall<T> {
  return { op, args } as unknown as KernelCall<T>;
}

function specOf(op: string): { readonly args: readonly string[]; readonly check: (...a: never[]) => void } {
  const spec = (KERNEL_CONTRACT as Record<string, { args: readonly string[]; check: (...a: never[]) => void }>)[op];
  if (!spec) throw new TypeError(`unknown kernel op ${String(op)}`);
  return spec;
}

/**
 * Runs the contract's check of `op`: tensors go through `elements(name, tensor)`, which
 * throws a TypeError for a wrong tensor type and returns its element count.
 */
export function validateCall<T>(op: KernelOp, args: readonly unknown[], elements: (name: string, t: T) => number): void {
  const spec = specOf(op);
  if (args.length !== spec.args.length) throw new TypeError(`${op} takes ${spec.args.length} arguments, got ${args.length}`);
  const seen = spec.args.map((a, i) => (a.endsWith(':tensor') ? elements(a.slice(0, a.indexOf(':')), args[i] as T) : args[i]));
  (spec.check as (...a: unknown[]) => void)(...seen);
}

/** The addon's positional arguments of a validated call: tensors through `wire`, geometry and batches flattened. */
export function encodeCall<T, W>(op: KernelOp, args: readonly unknown[], wire: (name: string, t: T) => W): unknown[] {
  const out: unknown[] = [];
  specOf(op).args.forEach((a, i) => {
    const [name, kind] = a.split(':') as [string, string];
    const v = args[i];
    if (kind === 'tensor') out.push(wire(name, v as T));
    else if (kind === 'geom') {
      const g = v as KvGeometry;
      out.push(g.numLayers, g.numKvHeads, g.headDim, g.blockSize);
    } else if (kind === 'batch') {
      const b = v as AttentionBatch;
      out.push(b.numSeqs, b.queryStart, b.contextLen, b.blockTables, b.maxBlocksPerSeq);
    } else out.push(v);
  });
  return out;
}
