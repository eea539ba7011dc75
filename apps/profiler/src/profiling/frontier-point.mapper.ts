import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ProfiledPattern } from '@mnemo/kv-core';
import type { FrontierPointSchema } from '@mnemo/proto';
import type { PatternResultEntity } from './pattern-result.entity.js';

export function toFrontierPoint(p: ProfiledPattern): MessageInitShape<typeof FrontierPointSchema> {
  return {
    pattern: p.pattern,
    quality: p.quality,
    meanKl: p.meanKl,
    recomputedLayers: p.recomputedLayers,
    eCacheBytesPerToken: p.eCacheBytesPerToken,
    prefillMs: p.prefillMs,
    ...(p.taskLoss !== undefined ? { taskLoss: p.taskLoss } : {}),
  };
}

export function toProfiledPattern(r: PatternResultEntity): ProfiledPattern {
  return {
    pattern: { r1: r.r1, u1: r.u1, r2: r.r2 },
    quality: r.top1Agreement,
    meanKl: r.meanKl,
    recomputedLayers: r.recomputedLayers,
    eCacheBytesPerToken: r.eCacheBytesPerToken,
    prefillMs: r.prefillMs,
    ...(r.taskLoss !== null && r.taskLoss !== undefined ? { taskLoss: r.taskLoss } : {}),
  };
}
