export function figure(r: Record<string, unknown>): Record<string, unknown>;
