import type { TransferOperand } from '@mnemo/native-cuda';

/**
 * The operand list of one native transfer, each operand listed once (ranges name operands by
 * index), and `op(o)`: the index of `o`, added at its first use. `first` get indices 0, 1, ….
 */
export function transferOperands(...first: TransferOperand[]): { operands: TransferOperand[]; op: (o: TransferOperand) => number } {
  const operands: TransferOperand[] = [];
  const index = new Map<TransferOperand, number>();
  const op = (o: TransferOperand): number => {
    let i = index.get(o);
    if (i === undefined) {
      i = operands.push(o) - 1;
      index.set(o, i);
    }
    return i;
  };
  for (const o of first) op(o);
  return { operands, op };
}
