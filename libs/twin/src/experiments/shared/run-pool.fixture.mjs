// A task for run-pool.spec.ts: squares its number after telling the caller it started.
export function square(x, emit) {
  emit(`start ${x}`);
  return x * x;
}
