/** What a store operation can report without depending on a logger implementation. */
export type StoreLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
