import { credentials, ServerCredentials, type ChannelCredentials } from '@grpc/grpc-js';
import type { PeerTls } from '../config/peer-tls.settings.js';

/** Server side: TLS, and a client certificate signed by the CA required of every caller. */
export function peerServerCredentials(tls: PeerTls | undefined): ServerCredentials {
  return tls
    ? ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true)
    : ServerCredentials.createInsecure();
}

/** Client side: verifies the peer against the CA and presents this node's certificate. */
export function peerChannelCredentials(tls: PeerTls | undefined): ChannelCredentials {
  return tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure();
}
