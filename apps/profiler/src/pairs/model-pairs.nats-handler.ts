import { ListModelPairsRequestSchema, RegisterModelPairRequestSchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { serveProfilerRequest } from '../nats/profiler.responder.js';
import { ListModelPairsUseCase } from './list-model-pairs.use-case.js';
import { toModelPairRecord } from './model-pair-record.mapper.js';
import { RegisterModelPairCommand } from './register-model-pair.command.js';
import { RegisterModelPairUseCase } from './register-model-pair.use-case.js';

/** NATS entry points of base → derived pairs. */
export const ModelPairsNatsHandler = natsEntryPoints(
  'ModelPairsNatsHandler',
  [RegisterModelPairUseCase, ListModelPairsUseCase],
  (nats, registerPair, listPairs) => {
    serveProfilerRequest(nats, Subjects.PROFILER_PAIRS_REGISTER, RegisterModelPairRequestSchema, async (req) => {
      const pair = await registerPair.execute(RegisterModelPairCommand.from(req));
      return { case: 'pair', value: toModelPairRecord(pair) };
    });
    serveProfilerRequest(nats, Subjects.PROFILER_PAIRS_LIST, ListModelPairsRequestSchema, async (req) => {
      const pairs = await listPairs.execute(req.base === '' ? null : req.base);
      return { case: 'pairs', value: { pairs: pairs.map(toModelPairRecord) } };
    });
  },
);
