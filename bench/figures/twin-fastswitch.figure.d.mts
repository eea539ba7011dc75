export function figure(r: object): Record<string, unknown>;
