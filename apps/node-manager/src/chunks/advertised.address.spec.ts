import { advertisedAddress } from './advertised.address.js';

describe(advertisedAddress.name, () => {
  it.each<[string, string | undefined, string, string]>([
    ['bind host when nothing is advertised', undefined, '127.0.0.1', '127.0.0.1:5000'],
    ['blank advertise is unset', '  ', '127.0.0.1', '127.0.0.1:5000'],
    ['wildcard IPv4 bind → hostname', undefined, '0.0.0.0', 'box:5000'],
    ['wildcard IPv6 bind → hostname', undefined, '::', 'box:5000'],
    ['advertised host takes the bound port', 'node-a', '0.0.0.0', 'node-a:5000'],
    ['advertised host:port is used as is', 'node-a:50061', '0.0.0.0', 'node-a:50061'],
    ['IPv6 literal without port', '[fd00::1]', '::', '[fd00::1]:5000'],
    ['IPv6 literal with port', '[fd00::1]:7', '::', '[fd00::1]:7'],
  ])('%s', (_name, advertise, host, expected) => {
    expect(advertisedAddress(advertise, host, 5000, 'box')).toBe(expected);
  });
});
