import { Inject, Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { ErrorCode, MnemoError, type ProfiledPattern } from '@mnemo/kv-core';
import { PAIR_FRONTIER_REPOSITORY, PATTERN_RESULT_REPOSITORY } from '../database/database.module.js';
import { toProfiledPattern } from './frontier-point.mapper.js';
import { PairFrontierEntity } from './pair-frontier.entity.js';
import { PatternResultEntity } from './pattern-result.entity.js';

export interface PairProfile {
  readonly base: string;
  readonly derived: string;
  readonly jobId: string;
  readonly layers: number;
  readonly fullPrefillMs: number;
  readonly createdAt: string;
  /** Cheapest first. */
  readonly frontier: readonly ProfiledPattern[];
}

/** The latest stored frontier of a pair (and, on request, every pattern its job measured); not_found before one exists. */
@Injectable()
export class GetPairProfileUseCase {
  constructor(
    @Inject(PAIR_FRONTIER_REPOSITORY) private readonly frontiers: Repository<PairFrontierEntity>,
    @Inject(PATTERN_RESULT_REPOSITORY) private readonly results: Repository<PatternResultEntity>,
  ) {}

  async frontier(base: string, derived: string): Promise<PairProfile> {
    const f = await this.frontiers.findOneBy({ baseModelId: base, derivedModelId: derived });
    if (!f)
      throw new MnemoError(ErrorCode.NotFound, `no profile stored for ${base} → ${derived}; start a profiling job first`, {
        base,
        derived,
      });
    return {
      base,
      derived,
      jobId: f.jobId,
      layers: f.numLayers,
      fullPrefillMs: f.fullPrefillMs,
      createdAt: f.createdAt.toISOString(),
      frontier: f.points,
    };
  }

  async patterns(base: string, derived: string): Promise<{ profile: PairProfile; patterns: ProfiledPattern[] }> {
    const profile = await this.frontier(base, derived);
    const rows = await this.results.findBy({ jobId: profile.jobId });
    return { profile, patterns: rows.map(toProfiledPattern) };
  }
}
