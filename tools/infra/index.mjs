// Moved, typed, to libs/testkit (import '@mnemo/testkit'); this path stays only for branches that still import it.
export * from '@mnemo/testkit';
