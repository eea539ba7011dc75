/**
 * One environment schema per service, validated once at boot. Every problem is
 * collected so an operator fixes them all in one go; secrets never echo back.
 */
export type VarSpec =
  | { type: 'string'; doc: string; default?: string; required?: boolean; secret?: boolean; when?: (env: Env) => boolean }
  | { type: 'int'; doc: string; default?: number; required?: boolean; min?: number; max?: number; when?: (env: Env) => boolean }
  | { type: 'bool'; doc: string; default?: boolean; when?: (env: Env) => boolean }
  | {
      type: 'url';
      doc: string;
      default?: string;
      required?: boolean;
      protocols: readonly string[];
      secret?: boolean;
      when?: (env: Env) => boolean;
    }
  | { type: 'list'; doc: string; default?: readonly string[]; required?: boolean; secret?: boolean; when?: (env: Env) => boolean }
  | { type: 'enum'; doc: string; values: readonly string[]; default?: string; when?: (env: Env) => boolean };

type Env = Readonly<Record<string, string | undefined>>;
export type Schema = Readonly<Record<string, VarSpec>>;

type ValueOf<S extends VarSpec> = S extends { type: 'int' }
  ? number
  : S extends { type: 'bool' }
    ? boolean
    : S extends { type: 'list' }
      ? string[]
      : string;

export type ConfigOf<S extends Schema> = { readonly [K in keyof S]: ValueOf<S[K]> | undefined };

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig<S extends Schema>(schema: S, env: Env = process.env): ConfigOf<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    if (spec.when && !spec.when(env)) continue;
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') {
      if ('required' in spec && spec.required && spec.default === undefined) problems.push(`${name} is required (${spec.doc})`);
      out[name] = spec.default === undefined ? undefined : Array.isArray(spec.default) ? [...spec.default] : spec.default;
      continue;
    }
    const shown = 'secret' in spec && spec.secret ? '<secret>' : JSON.stringify(raw);
    const parsed = parse(spec, raw);
    if (typeof parsed === 'object' && parsed !== null && 'problem' in parsed) problems.push(`${name}=${shown}: ${parsed.problem}`);
    else out[name] = parsed;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}

function parse(spec: VarSpec, raw: string): unknown {
  switch (spec.type) {
    case 'string':
      return raw;
    case 'int': {
      if (!/^-?\d+$/.test(raw)) return { problem: 'must be an integer' };
      const n = Number(raw);
      if (spec.min !== undefined && n < spec.min) return { problem: `must be ≥ ${spec.min}` };
      if (spec.max !== undefined && n > spec.max) return { problem: `must be ≤ ${spec.max}` };
      return n;
    }
    case 'bool':
      if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
      if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
      return { problem: 'must be true/false' };
    case 'url':
      try {
        const u = new URL(raw);
        if (!spec.protocols.includes(u.protocol.replace(/:$/, '')))
          return { problem: `protocol must be one of ${spec.protocols.join(', ')}` };
        return raw;
      } catch {
        return { problem: 'must be a URL' };
      }
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
    case 'enum':
      return spec.values.includes(raw) ? raw : { problem: `must be one of ${spec.values.join(', ')}` };
  }
}

/** Fields every service shares. */
export const commonSchema = {
  NATS_URL: {
    type: 'url',
    doc: 'NATS server, e.g. nats://127.0.0.1:4222 (credentials may ride in it: nats://user:password@host:4222)',
    required: true,
    protocols: ['nats', 'tls'],
    secret: true,
  },
  NATS_USER: { type: 'string', doc: 'NATS user (with NATS_PASSWORD); overrides one in NATS_URL' },
  NATS_PASSWORD: { type: 'string', doc: 'NATS password of NATS_USER', secret: true },
  NATS_TLS_CA: {
    type: 'string',
    doc: "PEM file of the CA that signed the NATS server's certificate: set, the connection requires TLS and verifies the server",
  },
  LOG_LEVEL: { type: 'enum', doc: 'minimum log level', values: ['debug', 'info', 'warn', 'error'], default: 'info' },
} as const satisfies Schema;

/** Bind address of a service's ops listener (/metrics, /healthz, /readyz): every service has one, the gateway too. */
export const opsSchema = {
  METRICS_HOST: { type: 'string', doc: 'bind address of /metrics, /healthz, /readyz (0.0.0.0 in containers)', default: '127.0.0.1' },
} as const satisfies Schema;
