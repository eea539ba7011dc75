export { chunkElems, layerPieces, padChunkPayload, segmentElems, type KvRowGeometry, type PayloadPiece } from './chunk-payload.layout.js';
