export function figure(r: Record<string, any>): Record<string, unknown>;
