import type { GatewayClient } from './gateway.client.mjs';
export const ROOT: string;
export function up(): Promise<number>;
export function bench(name: string, rest: string[]): Promise<number>;
export function status(gw: GatewayClient, out: (s: string) => void): Promise<number>;
export function why(gw: GatewayClient, id: string, o: { json?: boolean }, out: (s: string) => void): Promise<number>;
export function profile(
  gw: GatewayClient,
  base: string,
  derived: string,
  o: { out?: string; pollMs?: number; progress?: boolean },
  out: (s: string) => void,
): Promise<number>;
export function chat(
  gw: GatewayClient,
  o: { model?: string; system?: string; maxTokens?: number; input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream },
): Promise<number>;
