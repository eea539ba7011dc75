import { readFile, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { LookupTable, putRecord, type SegmentLocation } from '@mnemo/kv-core';
import { scratchDirEach } from '../../test/kv-store.fixture.js';
import { FILE_JOURNAL_IO, SsdJournalFile, type JournalIo } from './ssd-journal.file.js';

const KEY = '0123456789abcdef0123456789abcdef';
const loc = (offset: number): SegmentLocation => ({ deviceIndex: 0, type: 'ssd', offset, length: 4096, crc32c: 7 });
const put = (layer: number) => putRecord({ chunkKey: KEY, position: 0, layer }, loc(layer * 4096), layer);

/** A disk that fills up part-way through the next `failures` appends: half the bytes land, then ENOSPC. */
class FullDisk implements JournalIo {
  constructor(public failures: number) {}
  async append(fh: FileHandle, bytes: Uint8Array): Promise<void> {
    if (this.failures <= 0) return FILE_JOURNAL_IO.append(fh, bytes);
    this.failures--;
    await fh.write(bytes, 0, Math.floor(bytes.length / 2));
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }
}

const layers = async (path: string) => {
  const { journal, found } = await SsdJournalFile.open(path, 4);
  await journal.close();
  return {
    end: found.decoded.end,
    truncated: found.truncatedBytes,
    layers: found.decoded.records.flatMap((r) => (r.kind === 'put' ? [r.layer] : [])),
  };
};

describe(SsdJournalFile.name, () => {
  const scratch = scratchDirEach('mnemo-journal-');

  it('starts a fresh log with a header, and reads back what was flushed after a reopen', async () => {
    const path = join(scratch(), 'j');
    const { journal, found } = await SsdJournalFile.open(path, 4);
    expect(found.decoded.records).toEqual([]);
    journal.append([
      putRecord({ chunkKey: KEY, position: 0, layer: 1 }, loc(0), 10),
      putRecord({ chunkKey: KEY, position: 0, layer: 2 }, loc(4096), 11),
    ]);
    await journal.flush();
    await journal.close();
    const again = await SsdJournalFile.open(path, 4);
    expect(again.found.decoded.end).toBe('clean');
    expect(again.found.decoded.records.filter((r) => r.kind === 'put').map((r) => (r.kind === 'put' ? r.layer : -1))).toEqual([1, 2]);
    await again.journal.close();
  });

  it('cuts a torn tail before appending again', async () => {
    const path = join(scratch(), 'j');
    const { journal } = await SsdJournalFile.open(path, 4);
    journal.append([putRecord({ chunkKey: KEY, position: 0, layer: 0 }, loc(0), 1)]);
    await journal.close();
    const whole = await readFile(path);
    await writeFile(path, Buffer.concat([whole, whole.subarray(whole.length - 20, whole.length - 5)]));
    const again = await SsdJournalFile.open(path, 4);
    expect(again.found.truncatedBytes).toBe(15);
    expect((await stat(path)).size).toBe(whole.length);
    again.journal.append([putRecord({ chunkKey: KEY, position: 0, layer: 3 }, loc(8192), 2)]);
    await again.journal.close();
    const last = await SsdJournalFile.open(path, 4);
    expect(last.found.decoded.end).toBe('clean');
    expect(last.found.decoded.records.filter((r) => r.kind === 'put')).toHaveLength(2);
    await last.journal.close();
  });

  it.each([
    ['another model geometry', async (p: string) => (await SsdJournalFile.open(p, 8)).journal.close()],
    ['bytes that are no journal', (p: string) => writeFile(p, 'not a journal at all')],
  ])('starts over on %s', async (_name, prepare) => {
    const path = join(scratch(), 'j');
    await prepare(path);
    const { journal, found } = await SsdJournalFile.open(path, 4);
    expect(found.decoded.records).toEqual([]);
    await journal.close();
    const again = await SsdJournalFile.open(path, 4);
    expect(again.found.decoded.header?.numLayers).toBe(4);
    await again.journal.close();
  });

  it('compacts to a snapshot of the live SSD entries', async () => {
    const path = join(scratch(), 'j');
    const { journal } = await SsdJournalFile.open(path, 4);
    const table = new LookupTable({ numLayers: 4 });
    for (let l = 0; l < 4; l++) {
      table.put({ chunkKey: KEY, position: 0, layer: l }, loc(l * 4096), 5);
      journal.append([putRecord({ chunkKey: KEY, position: 0, layer: l }, loc(l * 4096), 5)]);
    }
    table.remove(KEY, 3, 'ssd');
    await journal.compact(table);
    expect(journal.recordsSinceCompaction).toBe(0);
    await journal.close();
    const again = await SsdJournalFile.open(path, 4);
    expect(again.found.decoded.header?.snapshot).toBe(true);
    expect(again.found.decoded.records.filter((r) => r.kind === 'put')).toHaveLength(3);
    await again.journal.close();
  });

  describe('when a write fails', () => {
    it('keeps the records, cuts the partial write back to the last good record, says so, and writes them on the retry', async () => {
      const path = join(scratch(), 'j');
      const disk = new FullDisk(0);
      const { journal } = await SsdJournalFile.open(path, 4, disk);
      const seen: unknown[] = [];
      journal.onFailure = (e) => seen.push(e);
      journal.append([put(0)]);
      await journal.flush();
      const good = (await stat(path)).size;
      disk.failures = 1;
      journal.append([put(1), put(2)]);
      await expect(journal.flush()).rejects.toThrow(/ENOSPC/);
      // Nothing of the failed write is left in the file, and nothing of what it carried is lost.
      expect((await stat(path)).size).toBe(good);
      expect(journal.health).toMatchObject({ state: 'failing', failures: 1, pending: 2, lastError: expect.stringMatching(/ENOSPC/) });
      expect(seen).toHaveLength(1);
      journal.append([put(3)]);
      await journal.flush();
      expect(journal.health).toMatchObject({ state: 'ok', failures: 1, pending: 0 });
      await journal.close();
      expect(await layers(path)).toEqual({ end: 'clean', truncated: 0, layers: [0, 1, 2, 3] });
    });

    it('retries by itself after a backoff, with only the records the failed flush covered', async () => {
      const path = join(scratch(), 'j');
      const { journal } = await SsdJournalFile.open(path, 4, new FullDisk(1));
      journal.append([put(1)]);
      await expect(journal.flush()).rejects.toThrow(/ENOSPC/);
      // Queued after the failure: its data has not been synced yet, so the retry leaves it alone.
      journal.append([put(2)]);
      const until = Date.now() + 5_000;
      while (journal.health.state !== 'ok' && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(journal.health).toMatchObject({ state: 'ok', pending: 1 });
      expect((await layers(`${path}`)).layers).toEqual([1]);
      await journal.close();
      expect((await layers(path)).layers).toEqual([1, 2]);
    });

    it('still compacts and closes after a failed flush (the flush chain does not stay rejected)', async () => {
      const path = join(scratch(), 'j');
      const { journal } = await SsdJournalFile.open(path, 4, new FullDisk(1));
      const table = new LookupTable({ numLayers: 4 });
      table.put({ chunkKey: KEY, position: 0, layer: 0 }, loc(0), 5);
      journal.append([put(0)]);
      await expect(journal.flush()).rejects.toThrow(/ENOSPC/);
      await journal.compact(table);
      expect(journal.health.state).toBe('ok');
      await journal.close();
      const again = await SsdJournalFile.open(path, 4);
      expect(again.found.decoded.header?.snapshot).toBe(true);
      expect(again.found.decoded.records.filter((r) => r.kind === 'put')).toHaveLength(1);
      await again.journal.close();
    });
  });

  it('does nothing once closed: a compaction asked for later cannot reopen the file', async () => {
    const path = join(scratch(), 'j');
    const { journal } = await SsdJournalFile.open(path, 4);
    journal.append([put(0)]);
    await journal.close();
    const before = await readFile(path);
    journal.append([put(1)]);
    await journal.compact(new LookupTable({ numLayers: 4 }));
    await journal.flush();
    expect(await readFile(path)).toEqual(before);
  });
});
