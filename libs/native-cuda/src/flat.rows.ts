/** Items as the addon takes them: one flat Float64Array, `fields` numbers per item in the order `row` gives. */
export function packRows<T>(items: readonly T[], fields: number, row: (item: T) => readonly number[]): Float64Array {
  const out = new Float64Array(items.length * fields);
  items.forEach((item, i) => out.set(row(item), i * fields));
  return out;
}
