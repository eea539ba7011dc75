export { chunkElems, layerPieces, padChunkPayload, segmentElems, type KvRowGeometry, type PayloadPiece } from './chunk-payload.layout.js';
export { pushRowRanges, type RowTarget } from './row.ranges.js';
