export const COLORS: Record<string, string>;
export function panelsSvg(panels: readonly object[], o?: { w?: number; h?: number; cols?: number }): string;
