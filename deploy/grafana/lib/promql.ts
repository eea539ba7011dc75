// A small PromQL tokenizer: enough to check a dashboard's queries (brackets balance, every
// function is a PromQL function) and to name the metrics each one reads. It is not a full parser:
// it knows where a name can only be a label (inside {…}, in by/without/on/ignoring/group_*
// lists) or a function (followed by "("), and everything else that looks like a name is a metric.
// Grafana's variables ($var, ${var}, $__rate_interval) are accepted where PromQL takes a value.

/** PromQL functions and aggregation operators (Prometheus 2.x/3.x query language). */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
const FUNCTIONS = new Set([
  ...AGGREGATIONS,
  'abs',
  'absent',
  'absent_over_time',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'days_in_month',
  'delta',
  'deriv',
  'exp',
  'floor',
  'histogram_avg',
  'histogram_count',
  'histogram_fraction',
  'histogram_quantile',
  'histogram_stddev',
  'histogram_stdvar',
  'histogram_sum',
  'hour',
  'idelta',
  'increase',
  'irate',
  'label_join',
  'label_replace',
  'ln',
  'log2',
  'log10',
  'minute',
  'month',
  'predict_linear',
  'rate',
  'resets',
  'round',
  'scalar',
  'sgn',
  'sort',
  'sort_desc',
  'sqrt',
  'time',
  'timestamp',
  'vector',
  'year',
  'avg_over_time',
  'min_over_time',
  'max_over_time',
  'sum_over_time',
  'count_over_time',
  'quantile_over_time',
  'stddev_over_time',
  'stdvar_over_time',
  'last_over_time',
  'present_over_time',
]);
/** Keywords followed by a parenthesised list of label names. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
const PAIRS: Record<string, string> = { '(': ')', '{': '}', '[': ']' };

export interface PromqlToken {
  readonly kind: 'name' | 'number' | 'string' | 'variable' | 'punct' | 'op';
  readonly text: string;
}

/**
 * Tokens of a PromQL expression: { kind, text } with kind one of name, number, string,
 * variable, punct, op. Throws a SyntaxError naming the position of anything else.
 */
export function tokenize(expr: string): PromqlToken[] {
  const out: PromqlToken[] = [];
  let i = 0;
  const at = (re: RegExp): string | null => {
    re.lastIndex = i;
    const m = re.exec(expr);
    return m && m.index === i ? m[0] : null;
  };
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < expr.length && expr[i] !== '\n') i++;
      continue;
    }
    let t: string | null;
    if ((t = at(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::[a-z]+)?\}|\$[A-Za-z_][A-Za-z0-9_]*/y))) out.push({ kind: 'variable', text: t });
    else if ((t = at(/[A-Za-z_:][A-Za-z0-9_:]*/y))) out.push({ kind: 'name', text: t });
    else if ((t = at(/(?:\d+(?:ms|s|m|h|d|w|y))+|0x[0-9a-fA-F]+|\d*\.?\d+(?:[eE][+-]?\d+)?/y))) out.push({ kind: 'number', text: t });
    else if ((t = at(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/y))) out.push({ kind: 'string', text: t });
    else if ((t = at(/==|!=|=~|!~|>=|<=|[-+*/%^<>=,:@]/y))) out.push({ kind: 'op', text: t });
    else if ('(){}[]'.includes(c)) {
      out.push({ kind: 'punct', text: c });
      i++;
      continue;
    } else throw new SyntaxError(`PromQL: unexpected ${JSON.stringify(c)} at ${i} in ${JSON.stringify(expr)}`);
    i += t.length;
  }
  return out;
}

/**
 * The metric names an expression reads, in order of first use, each once (a histogram's
 * `_bucket`, `_sum` or `_count` series as written). Throws a SyntaxError on unbalanced
 * brackets, an unknown function, or a label list that is not one.
 */
export function metricNames(expr: string): string[] {
  const tokens = tokenize(expr);
  const names: string[] = [];
  const stack: string[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const next = tokens[k + 1];
    if (t.kind === 'punct') {
      if (t.text in PAIRS) stack.push(t.text);
      else if (PAIRS[stack.pop() ?? ''] !== t.text)
        throw new SyntaxError(`PromQL: unbalanced ${JSON.stringify(t.text)} in ${JSON.stringify(expr)}`);
      continue;
    }
    // Label matchers and range selectors hold no metric names.
    if (stack.at(-1) === '{' || stack.at(-1) === '[' || t.kind !== 'name') continue;
    if (LABEL_LISTS.has(t.text)) {
      if (next?.text !== '(') {
        if (t.text === 'group_left' || t.text === 'group_right') continue;
        throw new SyntaxError(`PromQL: ${t.text} needs a label list in ${JSON.stringify(expr)}`);
      }
      const close = tokens.findIndex((x, j) => j > k && x.text === ')');
      if (close < 0) throw new SyntaxError(`PromQL: unclosed ${t.text}( in ${JSON.stringify(expr)}`);
      if (tokens.slice(k + 2, close).some((x) => x.kind !== 'name' && x.text !== ','))
        throw new SyntaxError(`PromQL: ${t.text}(…) takes label names in ${JSON.stringify(expr)}`);
      k = close;
      continue;
    }
    // `sum by (le) (…)`: the grouping comes between an aggregation and its argument.
    if (AGGREGATIONS.has(t.text) && (next?.text === 'by' || next?.text === 'without')) continue;
    if (next?.text === '(') {
      if (!FUNCTIONS.has(t.text)) throw new SyntaxError(`PromQL: unknown function ${t.text}() in ${JSON.stringify(expr)}`);
      continue;
    }
    if (KEYWORDS.has(t.text.toLowerCase())) continue;
    if (!names.includes(t.text)) names.push(t.text);
  }
  if (stack.length > 0) throw new SyntaxError(`PromQL: unclosed ${JSON.stringify(stack.at(-1))} in ${JSON.stringify(expr)}`);
  return names;
}

/**
 * The metric family a series name belongs to, given the families a /metrics page declares
 * (`# TYPE name kind`, family → kind): `x_bucket`, `x_sum`, `x_count` of histogram (or summary)
 * `x` → `x`.
 */
export function familyOf(series: string, types: ReadonlyMap<string, string>): string {
  if (types.has(series)) return series;
  const m = /^(.*)_(bucket|sum|count)$/.exec(series);
  if (m && (types.get(m[1]!) === 'histogram' || (types.get(m[1]!) === 'summary' && m[2] !== 'bucket'))) return m[1]!;
  return series;
}
