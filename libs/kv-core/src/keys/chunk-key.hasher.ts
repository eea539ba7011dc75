import { createHash } from 'node:crypto';
import { ErrorCode } from '../errors/error-code.enum.js';
import { MnemoError } from '../errors/mnemo.error.js';
import { CHUNK_TOKENS } from './chunk.constants.js';
import { validateTokenIds } from './token-ids.validator.js';

/** Bytes in one chunk key (128 bits). */
export const CHUNK_KEY_BYTES = 16;

/**
 * Chunk key chain — the exact byte encoding (a wire contract: every node, process and
 * language must produce identical keys, so never change it without versioning):
 *
 *   key_{-1} = 16 zero bytes
 *   msg_i    = key_{i-1}                       (16 bytes)
 *            ‖ u32le(len(utf8(model_id)))  ‖ utf8(model_id)
 *            ‖ u32le(len(utf8(tenant_salt))) ‖ utf8(tenant_salt)
 *            ‖ u32le(n)  ‖ u32le(t_0) ‖ … ‖ u32le(t_{n-1})   (n = chunk size, the chunk's token ids)
 *   key_i    = SHA-256(msg_i)[0..16)
 *
 * Length prefixes make the concatenation unambiguous ("ab"+"c" ≠ "a"+"bc"); chaining on
 * key_{i-1} makes key_i identify the whole prefix, not only chunk i's tokens. Keys are
 * rendered as 32 lowercase hex chars.
 */
export function chunkKeyBytes(
  modelId: string,
  tenantSalt: string,
  tokens: readonly number[] | Uint32Array,
  chunkTokens: number = CHUNK_TOKENS,
): Uint8Array[] {
  assertChunkTokens(chunkTokens);
  validateTokenIds(tokens);
  const header = encodeHeader(modelId, tenantSalt);
  const complete = Math.floor(tokens.length / chunkTokens);
  const out: Uint8Array[] = [];
  let prev: Uint8Array = new Uint8Array(CHUNK_KEY_BYTES);
  for (let c = 0; c < complete; c++) {
    prev = hashLink(prev, header, tokens, c * chunkTokens, chunkTokens);
    out.push(prev);
  }
  return out;
}

/** Hex form of {@link chunkKeyBytes}: one 32-char lowercase key per *complete* chunk; a partial tail gets none. */
export function chunkKeys(
  modelId: string,
  tenantSalt: string,
  tokens: readonly number[] | Uint32Array,
  chunkTokens: number = CHUNK_TOKENS,
): string[] {
  return chunkKeyBytes(modelId, tenantSalt, tokens, chunkTokens).map(keyToHex);
}

/**
 * One link of the chain: the key of the chunk `chunk` following `prevKey` (null for the
 * first chunk). Lets a caller extend a sequence's keys as chunks complete without rehashing
 * the prefix. `chunk` must be exactly one chunk's token ids.
 */
export function nextChunkKey(
  prevKey: string | Uint8Array | null,
  modelId: string,
  tenantSalt: string,
  chunk: readonly number[] | Uint32Array,
): string {
  validateTokenIds(chunk);
  if (chunk.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'a chunk has at least one token');
  const prev = prevKey === null ? new Uint8Array(CHUNK_KEY_BYTES) : typeof prevKey === 'string' ? hexToKey(prevKey) : prevKey;
  if (prev.length !== CHUNK_KEY_BYTES) {
    throw new MnemoError(ErrorCode.InvalidRequest, `a chunk key has ${CHUNK_KEY_BYTES} bytes`);
  }
  return keyToHex(hashLink(prev, encodeHeader(modelId, tenantSalt), chunk, 0, chunk.length));
}

export function keyToHex(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('hex');
}

const HEX_KEY = /^[0-9a-f]{32}$/;

/** Parses a 32-char lowercase hex key; anything else is a caller error. */
export function hexToKey(hex: string): Uint8Array {
  if (!HEX_KEY.test(hex)) {
    throw new MnemoError(ErrorCode.InvalidRequest, 'a chunk key is 32 lowercase hex characters', { key: hex });
  }
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

export function isChunkKey(value: unknown): value is string {
  return typeof value === 'string' && HEX_KEY.test(value);
}

function assertChunkTokens(chunkTokens: number): void {
  if (!Number.isInteger(chunkTokens) || chunkTokens <= 0) {
    throw new MnemoError(ErrorCode.InvalidRequest, 'chunkTokens must be a positive integer', { chunkTokens });
  }
}

/** model/salt part of every message, encoded once per call rather than once per chunk. */
function encodeHeader(modelId: string, tenantSalt: string): Buffer {
  const m = Buffer.from(modelId, 'utf8');
  const s = Buffer.from(tenantSalt, 'utf8');
  const out = Buffer.alloc(4 + m.length + 4 + s.length);
  out.writeUInt32LE(m.length, 0);
  m.copy(out, 4);
  out.writeUInt32LE(s.length, 4 + m.length);
  s.copy(out, 8 + m.length);
  return out;
}

/** Whether this machine stores a u32 little-endian (then a Uint32Array view writes the body's words as the encoding wants). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The body of one link is built in this buffer, reused across calls: hashing copies what it is
 * given before returning, and keys are hashed for every prompt a node plans, so a fresh buffer
 * per link would be garbage on the hot path. Grown to the longest chunk seen.
 */
let scratch = new Uint32Array(1 + CHUNK_TOKENS);

function hashLink(prev: Uint8Array, header: Buffer, tokens: readonly number[] | Uint32Array, start: number, count: number): Uint8Array {
  let body: Uint8Array;
  if (LITTLE_ENDIAN) {
    if (scratch.length < 1 + count) scratch = new Uint32Array(1 + count);
    scratch[0] = count;
    for (let j = 0; j < count; j++) scratch[1 + j] = tokens[start + j]!;
    body = new Uint8Array(scratch.buffer, 0, 4 + 4 * count);
  } else {
    const b = Buffer.alloc(4 + 4 * count);
    b.writeUInt32LE(count, 0);
    for (let j = 0; j < count; j++) b.writeUInt32LE(tokens[start + j]!, 4 + 4 * j);
    body = b;
  }
  const digest = createHash('sha256').update(prev).update(header).update(body).digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, CHUNK_KEY_BYTES).slice();
}

/**
 * One link of the chain over `tokens[start, start + count)` after `prev` (bytes), with the
 * (model, salt) header already encoded ({@link chainHeader}): {@link nextChunkKey} without
 * re-encoding the header, re-parsing the previous key or copying the tokens, for callers that
 * extend one chain many times (BlockKeyChain). Validates the tokens it reads.
 */
export function chainLink(
  prev: Uint8Array,
  header: Buffer,
  tokens: readonly number[] | Uint32Array,
  start: number,
  count: number,
): Uint8Array {
  if (count <= 0) throw new MnemoError(ErrorCode.InvalidRequest, 'a chunk has at least one token');
  if (!(tokens instanceof Uint32Array)) {
    for (let i = start; i < start + count; i++) {
      const t = tokens[i];
      if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t >= 2 ** 32) validateTokenIds(tokens.slice(start, start + count));
    }
  }
  return hashLink(prev, header, tokens, start, count);
}

/** The encoded (model, salt) part of every link ({@link chainLink}). */
export function chainHeader(modelId: string, tenantSalt: string): Buffer {
  return encodeHeader(modelId, tenantSalt);
}
