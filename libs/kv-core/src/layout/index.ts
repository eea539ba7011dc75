export { chunkElems, layerPieces, segmentElems, type KvRowGeometry, type PayloadPiece } from './chunk-payload.layout.js';
