// One Long Doc QA request's time to its first token and its blocked I/O in one configuration of
// the pooling experiment, analytic per layer: no queueing, since the paper runs one request at a
// time (§VI "Multi-turn request serving").
import { placeSegments } from '@mnemo/kv-core';
import { DEFAULT_EFFICIENCY, GPUS, kvBytesPerToken, MODELS, pcieLink, type ModelSpec } from '../../costs/hardware.tables.js';
import { layerwisePrefillMs } from '../../costs/layerwise.load.js';
import { rooflineCompute, scaleGpu } from '../../costs/roofline.compute.js';
import { POOLING_CONFIGS, POOLING_SETUP, round, type PoolingConfig, type PoolingConfigName, type PoolingSetup } from './pooling.setup.js';

/** One request's times (ms) and the KV it reads (bytes). */
export interface RequestTimes {
  readonly ttft_ms: number;
  readonly blocked_io_ms: number;
  readonly compute_ms: number;
  readonly kv_bytes: number;
  readonly ssd_bytes: number;
}

/** A device a request's KV is read from: a host memory module or an SSD, and its bandwidth (bytes/ms). */
interface ReadDevice {
  readonly kind: 'host' | 'ssd';
  readonly bw: number;
}

/** The request's KV split into host-resident and SSD-resident segments (chunk × layer), layer-wise. */
function residency(s: PoolingSetup, model: ModelSpec, context: number) {
  const chunks = Math.ceil(context / s.chunkTokens);
  const segBytes = (s.chunkTokens * kvBytesPerToken(model)) / model.layers;
  const hostSegs = Math.min(chunks * model.layers, Math.floor(s.hostPoolBytes / s.documents / segBytes));
  return { chunks, segBytes, hostSegs, ssdSegs: chunks * model.layers - hostSegs };
}

/**
 * Bytes of each layer per device. Striped: kv-core's placeSegments over the configuration's host
 * modules (room: the host share) and SSDs, segments enumerated layer-wise (every chunk's layer 0,
 * then layer 1, …) as Eq. 2's allocator does. Not striped: one module takes the host share (the
 * first chunks, LMCache's hot tier), one SSD the rest.
 */
function layerBytes(s: PoolingSetup, model: ModelSpec, cfg: PoolingConfig, context: number) {
  const { chunks, segBytes, hostSegs } = residency(s, model, context);
  const hostChunks = Math.floor(hostSegs / model.layers);
  const devices: ReadDevice[] = [
    ...Array.from({ length: cfg.modules }, (): ReadDevice => ({ kind: 'host', bw: s.ddr4BytesPerMs })),
    ...Array.from({ length: cfg.ssds }, (): ReadDevice => ({ kind: 'ssd', bw: s.nvme.bytesPerMs })),
  ];
  const perLayer = Array.from({ length: model.layers }, () => devices.map(() => 0));
  const segments: { layer: number; position: number }[] = [];
  for (let layer = 0; layer < model.layers; layer++) for (let chunk = 0; chunk < chunks; chunk++) segments.push({ layer, position: chunk });
  if (cfg.striped) {
    // Host room split evenly over the modules; SSD room unbounded (200 GB).
    const hostRoom = devices.map((d, i) =>
      d.kind === 'host' ? Math.floor(hostSegs / cfg.modules) + (i < hostSegs % cfg.modules ? 1 : 0) : undefined,
    );
    const { sets, unplaced } = placeSegments(
      segments,
      devices.map((d, i) => ({ bandwidth: d.bw, room: hostRoom[i] })),
    );
    if (unplaced.length) throw new Error(`pooling: ${unplaced.length} segments found no device`);
    sets.forEach((set, i) => set.forEach((seg) => (perLayer[seg.layer][i] += segBytes)));
  } else {
    for (const seg of segments) perLayer[seg.layer][seg.position < hostChunks ? 0 : cfg.modules] += segBytes;
  }
  return { devices, perLayer, chunks, segBytes, hostChunks };
}

/** One request's time to first token and blocked I/O (ms) in one configuration. */
export function poolingRequestTimes(cfgName: PoolingConfigName, context: number, s: PoolingSetup = POOLING_SETUP): RequestTimes {
  const cfg = POOLING_CONFIGS[cfgName];
  const model = MODELS[s.model];
  const compute = rooflineCompute(scaleGpu(GPUS[s.gpu], { flops: s.flopsScale ?? 1 }), model);
  const link = pcieLink(GPUS[s.gpu].pcieGen);
  const pcie = { ...link, bytesPerMs: link.bytesPerMs * (s.pcieScale ?? 1) };
  const fsFactor = 1 / (1 - s.filesystemShare);
  const { devices, perLayer, chunks, hostChunks } = layerBytes(s, model, cfg, context);
  // The question's prefill attending to the whole context, spread evenly over the layers; the
  // engine step is charged once.
  const computeMs = compute.prefillMs(1, s.questionTokens, s.questionTokens * (context + s.questionTokens)) - DEFAULT_EFFICIENCY.stepMs;
  const layerComputeMs = computeMs / model.layers;
  // A device's read of `bytes` in `reads` commands: at queue depth 1 each command's latency is paid,
  // an async loader keeps the next read queued (one latency in all); the filesystem multiplies an SSD's time.
  const readMs = (d: ReadDevice, bytes: number, reads: number): number => {
    if (bytes === 0) return 0;
    const latency = d.kind === 'ssd' ? s.nvme.dispatchMs * (cfg.async ? 1 : reads) : 0;
    const t = latency + bytes / d.bw;
    return d.kind === 'ssd' && cfg.filesystem ? t * fsFactor : t;
  };
  const deviceTotals = devices.map((_, i) => perLayer.reduce((a, l) => a + l[i], 0));
  const totalBytes = deviceTotals.reduce((a, b) => a + b, 0);
  let ttft: number;
  if (cfg.striped) {
    // Mnemo's layer-wise restore: each layer's segments read from every device in parallel (one
    // contiguous extent per device per layer), staged and copied to the GPU while the previous layer
    // computes. Storage and PCIe of successive layers pipeline; a layer computes once its KV is in.
    let ioDone = cfg.async ? -DEFAULT_EFFICIENCY.stepMs : 0;
    let copyDone = ioDone;
    let computeDone = 0;
    for (const bytes of perLayer) {
      ioDone += Math.max(...devices.map((d, i) => readMs(d, bytes[i], 1)));
      const layerTotal = bytes.reduce((a, b) => a + b, 0);
      copyDone = Math.max(ioDone, copyDone) + pcie.dispatchMs + layerTotal / pcie.bytesPerMs;
      computeDone = Math.max(computeDone, copyDone) + layerComputeMs;
    }
    ttft = Math.max(computeDone, 0) + DEFAULT_EFFICIENCY.stepMs;
  } else {
    // LMCache's retrieval: chunk files read one after another from the host tier and the SSD into
    // host buffers (§III-B: serialized through one module and one SSD). Every layer of a chunk is in
    // its file, so no layer can start before every chunk is in host memory.
    const storageMs =
      devices.reduce((a, d, i) => a + readMs(d, deviceTotals[i], d.kind === 'ssd' ? chunks - hostChunks : hostChunks), 0) -
      (cfg.async ? DEFAULT_EFFICIENCY.stepMs : 0);
    const copyMs = (cfg.lp ? model.layers : chunks) * pcie.dispatchMs + totalBytes / pcie.bytesPerMs;
    if (cfg.lp) {
      // LMCache's layer-wise pipelining: each layer's KV is retrieved (its share of the serialized storage reads, then
      // its host→GPU copy) while the previous layer computes; a layer computes once its KV is in.
      const loadPerLayer = (Math.max(storageMs, 0) + copyMs) / model.layers;
      ttft = layerwisePrefillMs(model.layers, loadPerLayer, layerComputeMs) + DEFAULT_EFFICIENCY.stepMs;
    } else ttft = Math.max(storageMs, 0) + copyMs + computeMs + DEFAULT_EFFICIENCY.stepMs;
  }
  // §II-B1: blocked I/O is the time only KV retrieval proceeds, with no GPU computation beside it.
  const blocked = ttft - computeMs - DEFAULT_EFFICIENCY.stepMs;
  return {
    ttft_ms: round(ttft, 3),
    blocked_io_ms: round(blocked, 3),
    compute_ms: round(computeMs, 3),
    kv_bytes: totalBytes,
    ssd_bytes: devices.reduce((a, d, i) => a + (d.kind === 'ssd' ? deviceTotals[i] : 0), 0),
  };
}

/**
 * Striping alone: the whole request's KV on SSD through passthrough, read layer-wise from one
 * device or spread by kv-core's placement over both (host share set to 0).
 */
export function ssdRetrievalMs(context: number, ssds: number, s: PoolingSetup = POOLING_SETUP): number {
  const ssdOnly = { ...s, hostPoolBytes: 0 };
  const model = MODELS[s.model];
  const cfg: PoolingConfig = { modules: 0, ssds, filesystem: false, lp: true, async: true, striped: true };
  const { devices, perLayer } = layerBytes(ssdOnly, model, cfg, context);
  return perLayer.reduce((a, bytes) => a + Math.max(...devices.map((d, i) => (bytes[i] ? bytes[i] / d.bw : 0))), 0) + s.nvme.dispatchMs;
}
