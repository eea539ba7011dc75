import { Inject, Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { PROFILING_JOB_REPOSITORY } from '../database/database.module.js';
import { ProfilingJobEntity } from './profiling-job.entity.js';
import { toJobView, type ProfilingJobView } from './profiling-job.view.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A job's status and progress (percent, ETA); not_found for an unknown or malformed id. */
@Injectable()
export class GetProfilingJobUseCase {
  constructor(
    @Inject(PROFILING_JOB_REPOSITORY) private readonly jobs: Repository<ProfilingJobEntity>,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(id: string): Promise<ProfilingJobView> {
    const job = UUID.test(id) ? await this.jobs.findOneBy({ id }) : null;
    if (!job) throw new MnemoError(ErrorCode.NotFound, `no profiling job ${id}`);
    return toJobView(job, this.clock.unixMs());
  }
}
