export function figure(r: {
  curves: Record<string, Record<number, Record<string, unknown>>>;
  symphony: { imbalance_256: Record<string, number | null> };
  setup: { run: { users: number[]; imbalanceUsers: number } };
}): Record<string, unknown>;
