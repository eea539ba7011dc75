import type { MessageInitShape } from '@bufbuild/protobuf';
import { profiledPattern, type ProfiledPattern } from '@mnemo/kv-core';
import type { FrontierPointSchema } from '@mnemo/proto';
import type { PatternResultEntity } from './pattern-result.entity.js';

/** A frontier point as the wire carries it: the same fields as the pattern's profile. */
export function toFrontierPoint(p: ProfiledPattern): MessageInitShape<typeof FrontierPointSchema> {
  return profiledPattern(p);
}

/** A stored pattern result; the table names the quality `top1_agreement` and keeps the pattern in three columns. */
export function toProfiledPattern(r: PatternResultEntity): ProfiledPattern {
  return profiledPattern({ ...r, pattern: { r1: r.r1, u1: r.u1, r2: r.r2 }, quality: r.top1Agreement });
}
