// The benchmarks' shared arithmetic and /metrics reader live, typed, in @mnemo/testkit (order
// statistics in @mnemo/kv-core, shared with the twin); this path stays for the bench scripts.
export * from '@mnemo/testkit';
