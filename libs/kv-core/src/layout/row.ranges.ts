/** Where each position's K and V rows sit in the engine's cache, as byte offsets (negative: not restored there). */
export interface RowTarget {
  readonly kOffsets: ArrayLike<number>;
  readonly vOffsets: ArrayLike<number>;
}

/**
 * Transfer ranges for one payload piece (`len` floats at payload offset `dst`, layout
 * `[K|V][n][row]`, read from byte `src` of operand `srcOp`) into the engine's rows at `target`
 * (operand 0), appended to `ranges` as `srcOp, srcByte, 0, dstByte, bytes`: one range per run of
 * positions whose rows are adjacent there (a block's worth); a position at a negative offset is
 * skipped.
 */
export function pushRowRanges(
  ranges: number[],
  srcOp: number,
  src: number,
  dst: number,
  len: number,
  n: number,
  row: number,
  target: RowTarget,
): void {
  const half = n * row;
  const offsets = dst >= half ? target.vOffsets : target.kOffsets;
  const start = (dst % half) / row;
  const count = len / row;
  const rowBytes = row * 4;
  let i = 0;
  while (i < count) {
    if (offsets[start + i]! < 0) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < count && offsets[start + j] === offsets[start + i]! + (j - i) * rowBytes) j++;
    ranges.push(srcOp, src + i * rowBytes, 0, offsets[start + i]!, (j - i) * rowBytes);
    i = j;
  }
}
