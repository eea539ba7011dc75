import { closeSync, openSync, readSync, writeSync, fsyncSync } from 'node:fs';

import { openHostPool } from './host-pool.device.js';
import { packTransferRanges, transfer } from './pool.transfer.js';
import { openSsdPool } from './ssd-pool.device.js';
import { describePoolDeviceContract, type TierUnderTest } from './testing/pool-device.contract.js';
import { tempDir } from './testing/pool.fixtures.js';

const MiB = 2 ** 20;

describePoolDeviceContract(
  'host pool',
  async () => {
    const device = await openHostPool({ bytes: 8 * MiB });
    return {
      device,
      // A stray write into the region: the bytes change under the stored CRC.
      corrupt: async (offset) => {
        const byte = new Uint8Array(1);
        await transfer([device, byte], packTransferRanges([{ src: 0, srcOffset: offset, dst: 1, dstOffset: 0, length: 1 }]));
        byte[0] ^= 0x40;
        await transfer([byte, device], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: offset, length: 1 }]));
      },
    };
  },
  { persistent: false },
);

for (const backend of ['auto', 'pread'] as const) {
  const dirs: Array<ReturnType<typeof tempDir>> = [];
  afterAll(() => dirs.forEach((d) => d.remove()));

  const openTier = async (path: string, bytes?: number): Promise<TierUnderTest> => {
    const device = await openSsdPool({ path, bytes, backend, queueDepth: 8, maxRequestBytes: 256 * 1024 });
    return {
      device,
      // Disk corruption: one bit flipped in the file, past the device's back.
      corrupt: async (offset) => {
        const fd = openSync(path, 'r+');
        const byte = Buffer.alloc(1);
        readSync(fd, byte, 0, 1, offset);
        byte[0] ^= 0x40;
        writeSync(fd, byte, 0, 1, offset);
        fsyncSync(fd);
        closeSync(fd);
      },
      reopen: async () => {
        await device.close();
        return openTier(path);
      },
    };
  };

  describePoolDeviceContract(
    `SSD pool (${backend === 'auto' ? 'io_uring' : 'pread'})`,
    async () => {
      const dir = tempDir();
      dirs.push(dir);
      return openTier(dir.file('pool.bin'), 8 * MiB);
    },
    { persistent: true },
  );
}
