export {
  explainKv,
  type ExplainInput,
  type KvSegment,
  type KvSourceKind,
  type KvMissReason,
  type NodeKvFacts,
  type ChunkRoutingFacts,
  type ChunkDropFact,
} from './kv.explanation.js';
