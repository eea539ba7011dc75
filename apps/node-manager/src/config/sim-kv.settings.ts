import type { SimKvLayout } from '@mnemo/engine';

/** NODE_SIM_KV_BYTES parsed: one layout for every served model, per-model layouts, or none (off). */
export type SimKvBytes = SimKvLayout | Readonly<Record<string, SimKvLayout>> | undefined;

const LAYOUT = /^(\d{1,4})x(\d{1,5})$/;

/**
 * Parses NODE_SIM_KV_BYTES: `off` (or unset), `<layers>x<rowElems>` for every served model, or
 * `model=<layers>x<rowElems>` entries (a served model without one keeps no KV bytes). Every
 * problem is listed; a model not in NODE_MODELS is one.
 */
export function parseSimKvBytes(
  entries: readonly string[] | undefined,
  models: readonly string[],
): { value: SimKvBytes; problems: string[] } {
  const problems: string[] = [];
  const list = (entries ?? []).map((e) => e.trim()).filter((e) => e !== '');
  if (list.length === 0 || (list.length === 1 && list[0] === 'off')) return { value: undefined, problems };
  const layout = (text: string, what: string): SimKvLayout | undefined => {
    const m = LAYOUT.exec(text);
    const l = m && { layers: Number(m[1]), rowElems: Number(m[2]) };
    if (!l || l.layers < 1 || l.layers > 1024 || l.rowElems < 1 || l.rowElems > 65_536) {
      problems.push(
        `NODE_SIM_KV_BYTES: ${what} ${JSON.stringify(text)} must be <layers>x<rowElems> (layers 1…1024, row 1…65536 floats), e.g. 32x16`,
      );
      return undefined;
    }
    return l;
  };
  if (list.length === 1 && !list[0]!.includes('=')) return { value: layout(list[0]!, 'layout'), problems };
  const perModel: Record<string, SimKvLayout> = {};
  for (const e of list) {
    const [model, text] = e.split('=', 2) as [string, string | undefined];
    if (text === undefined)
      problems.push(`NODE_SIM_KV_BYTES: ${JSON.stringify(e)} must be model=<layers>x<rowElems> when several are given`);
    else if (!models.includes(model)) problems.push(`NODE_SIM_KV_BYTES: model ${JSON.stringify(model)} is not in NODE_MODELS`);
    else {
      const l = layout(text, `layout of ${model}`);
      if (l) perModel[model] = l;
    }
  }
  return { value: problems.length > 0 ? undefined : perModel, problems };
}
