import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ListModelPairsRequestSchema, RegisterModelPairRequestSchema, Subjects } from '@mnemo/proto';
import { ProfilerResponder } from '../nats/profiler.responder.js';
import { ListModelPairsUseCase } from './list-model-pairs.use-case.js';
import { toModelPairRecord } from './model-pair-record.mapper.js';
import { RegisterModelPairCommand } from './register-model-pair.command.js';
import { RegisterModelPairUseCase } from './register-model-pair.use-case.js';

/** NATS entry points of base → derived pairs. */
@Injectable()
export class ModelPairsNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(ProfilerResponder) private readonly responder: ProfilerResponder,
    @Inject(RegisterModelPairUseCase) private readonly registerPair: RegisterModelPairUseCase,
    @Inject(ListModelPairsUseCase) private readonly listPairs: ListModelPairsUseCase,
  ) {}

  onApplicationBootstrap(): void {
    this.responder.serve(Subjects.PROFILER_PAIRS_REGISTER, RegisterModelPairRequestSchema, async (req) => {
      const pair = await this.registerPair.execute(RegisterModelPairCommand.from(req));
      return { case: 'pair', value: toModelPairRecord(pair) };
    });
    this.responder.serve(Subjects.PROFILER_PAIRS_LIST, ListModelPairsRequestSchema, async (req) => {
      const pairs = await this.listPairs.execute(req.base === '' ? null : req.base);
      return { case: 'pairs', value: { pairs: pairs.map(toModelPairRecord) } };
    });
  }
}
