import { ConfigError } from '@mnemo/service-kit';
import { loadGatewayConfig } from './gateway.config.js';

describe(loadGatewayConfig.name, () => {
  it('applies the documented defaults', () => {
    expect(loadGatewayConfig({ NATS_URL: 'nats://127.0.0.1:4222' })).toEqual({
      natsUrl: 'nats://127.0.0.1:4222',
      natsCredentials: {},
      opsHost: '127.0.0.1',
      opsPort: 9401,
      logLevel: 'info',
      host: '127.0.0.1',
      port: 8080,
      grpcPort: 50051,
      apiKeys: [],
      adminKeys: [],
      maxPromptTokens: 8192,
      requestTimeoutMs: 120_000,
      idleTimeoutMs: 60_000,
      maxBodyBytes: 2 * 1024 * 1024,
      streamBufferEvents: 256,
      stallTimeoutMs: 30_000,
      failoverRetries: 2,
      profilerUrl: 'http://127.0.0.1:8090',
      profilerTimeoutMs: 10_000,
      advisoryLimit: { ratePerSec: 50, burst: 100 },
      whyLimit: { ratePerSec: 10, burst: 20 },
      defaultModel: 'fortune-base',
    });
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['a zero advisory rate', { GATEWAY_ADVISORY_RATE: '0' }, /GATEWAY_ADVISORY_RATE="0": must be ≥ 1/],
    ['a fractional advisory burst', { GATEWAY_ADVISORY_BURST: '1.5' }, /GATEWAY_ADVISORY_BURST="1.5": must be an integer/],
  ])('refuses %s', (_n, env, problem) => {
    expect(() => loadGatewayConfig({ NATS_URL: 'nats://h:1', ...env })).toThrow(problem);
  });

  it('takes the default model from MNEMO_DEFAULT_MODEL and refuses what cannot be a model id', () => {
    expect(loadGatewayConfig({ NATS_URL: 'nats://h:1', MNEMO_DEFAULT_MODEL: 'mnemo-tiny' }).defaultModel).toBe('mnemo-tiny');
    for (const bad of ['tools/train/models/fortune-base', 'two words', 'x'.repeat(257)]) {
      expect(() => loadGatewayConfig({ NATS_URL: 'nats://h:1', MNEMO_DEFAULT_MODEL: bad })).toThrow(/MNEMO_DEFAULT_MODEL/);
    }
  });

  it('parses the API key list', () => {
    expect(loadGatewayConfig({ NATS_URL: 'nats://h:1', MNEMO_API_KEYS: 'a, b' }).apiKeys).toEqual(['a', 'b']);
  });

  it('keeps the profiler URL without a trailing slash and refuses other protocols', () => {
    expect(loadGatewayConfig({ NATS_URL: 'nats://h:1', GATEWAY_PROFILER_URL: 'http://profiler:8090/' }).profilerUrl).toBe(
      'http://profiler:8090',
    );
    expect(() => loadGatewayConfig({ NATS_URL: 'nats://h:1', GATEWAY_PROFILER_URL: 'nats://profiler:4222' })).toThrow(ConfigError);
  });

  it('lists every problem at once', () => {
    let err: unknown;
    try {
      loadGatewayConfig({
        GATEWAY_PORT: 'http',
        GATEWAY_MAX_PROMPT_TOKENS: '0',
        GATEWAY_REQUEST_TIMEOUT_MS: '-5',
        LOG_LEVEL: 'loud',
        GATEWAY_STREAM_BUFFER_EVENTS: '4',
        GATEWAY_STALL_TIMEOUT_MS: 'soon',
        GATEWAY_FAILOVER_RETRIES: '11',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    for (const name of [
      'NATS_URL',
      'GATEWAY_PORT',
      'GATEWAY_MAX_PROMPT_TOKENS',
      'GATEWAY_REQUEST_TIMEOUT_MS',
      'LOG_LEVEL',
      'GATEWAY_STREAM_BUFFER_EVENTS',
      'GATEWAY_STALL_TIMEOUT_MS',
      'GATEWAY_FAILOVER_RETRIES',
    ])
      expect(problems).toContain(name);
  });
});
