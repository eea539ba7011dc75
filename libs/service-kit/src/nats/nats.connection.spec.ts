import { natsConnectOptions } from './nats.connection.js';

describe(natsConnectOptions.name, () => {
  it.each<[string, string, { user?: string; password?: string }, object]>([
    ['no credentials', 'nats://127.0.0.1:4222', {}, { servers: 'nats://127.0.0.1:4222' }],
    [
      'credentials in the URL (a Kubernetes Secret builds it so)',
      'nats://mnemo:s3cret@nats.mnemo.svc:4222',
      {},
      { servers: 'nats://nats.mnemo.svc:4222', user: 'mnemo', pass: 's3cret' },
    ],
    ['percent-encoded ones', 'nats://a%40b:p%3Aw%2F@h:4222', {}, { servers: 'nats://h:4222', user: 'a@b', pass: 'p:w/' }],
    ['NATS_USER / NATS_PASSWORD', 'nats://h:4222', { user: 'u', password: 'p' }, { servers: 'nats://h:4222', user: 'u', pass: 'p' }],
    [
      'NATS_USER wins over the URL, with its own password',
      'nats://x:y@h:4222',
      { user: 'u', password: 'p' },
      { servers: 'nats://h:4222', user: 'u', pass: 'p' },
    ],
    [
      'only NATS_PASSWORD: the URL user with that password',
      'nats://x:y@h:4222',
      { password: 'p' },
      { servers: 'nats://h:4222', user: 'x', pass: 'p' },
    ],
    ['tls', 'tls://u:p@h:4443', {}, { servers: 'tls://h:4443', user: 'u', pass: 'p' }],
  ])('%s', (_name, url, creds, want) => {
    expect(natsConnectOptions(url, creds)).toEqual(want);
  });
});
