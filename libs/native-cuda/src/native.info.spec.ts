import { readFileSync } from 'node:fs';

import { EXPECTED_NATIVE_ABI } from './addon.loader.js';
import { cudaInfo, nativeVersion } from './native.info.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

describe(nativeVersion.name, () => {
  it('reports the package version, the ABI the wrapper expects and Node-API 8', () => {
    const sut = nativeVersion();
    expect(sut.version).toBe(pkg.version);
    expect(sut.abi).toBe(EXPECTED_NATIVE_ABI);
    expect(sut.napi).toBe(8);
    expect(typeof sut.cuda).toBe('boolean');
  });
});

describe(cudaInfo.name, () => {
  it('agrees with the build about CUDA being compiled in', () => {
    expect(cudaInfo().compiled).toBe(nativeVersion().cuda);
  });

  it('lists every device it counts, or says why there is none', () => {
    const sut = cudaInfo();
    expect(sut.devices).toHaveLength(sut.deviceCount);
    if (sut.deviceCount === 0) {
      expect(sut.error).toEqual(expect.any(String));
      expect(sut.error!.length).toBeGreaterThan(0);
    } else {
      expect(sut.error).toBeNull();
      expect(sut.devices[0]!.name.length).toBeGreaterThan(0);
      expect(sut.devices[0]!.totalMemory).toBeGreaterThan(0);
    }
  });

  it('reports the CUDA runtime version when compiled in', () => {
    const sut = cudaInfo();
    if (sut.compiled) expect(sut.runtimeVersion).toBeGreaterThanOrEqual(12000);
    else expect(sut.runtimeVersion).toBe(0);
  });
});
