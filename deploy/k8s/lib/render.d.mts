export const DEFAULT_IMAGE: string;
export const OVERLAYS: Readonly<Record<string, { name: string; summary: string; nodeReplicas: number; ssdHosts: string[] }>>;
export function manifests(
  overlay: string,
  image?: string,
  ssdHosts?: string[],
): Array<{ file: string; objects: Array<{ validate(): void; toJSON(): Record<string, unknown> }> }>;
export function render(overlay: string, image?: string, ssdHosts?: string[]): Map<string, string>;
