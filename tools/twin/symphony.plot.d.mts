import type { Curves, SymphonyKeys, SymphonyRun } from './symphony.mjs';
export function paperPanels(curves: Curves, keys: SymphonyKeys, o: SymphonyRun): object[];
