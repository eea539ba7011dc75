import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LookupTable, putRecord, type SegmentLocation } from '@mnemo/kv-core';
import { SsdJournalFile } from './ssd-journal.file.js';

const KEY = '0123456789abcdef0123456789abcdef';
const loc = (offset: number): SegmentLocation => ({ deviceIndex: 0, type: 'ssd', offset, length: 4096, crc32c: 7 });

describe(SsdJournalFile.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mnemo-journal-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts a fresh log with a header, and reads back what was flushed after a reopen', async () => {
    const path = join(dir, 'j');
    const { journal, found } = await SsdJournalFile.open(path, 4);
    expect(found.decoded.records).toEqual([]);
    journal.append([putRecord({ chunkKey: KEY, position: 0, layer: 1 }, loc(0), 10), putRecord({ chunkKey: KEY, position: 0, layer: 2 }, loc(4096), 11)]);
    await journal.flush();
    await journal.close();
    const again = await SsdJournalFile.open(path, 4);
    expect(again.found.decoded.end).toBe('clean');
    expect(again.found.decoded.records.filter((r) => r.kind === 'put').map((r) => (r.kind === 'put' ? r.layer : -1))).toEqual([1, 2]);
    await again.journal.close();
  });

  it('cuts a torn tail before appending again', async () => {
    const path = join(dir, 'j');
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
    const path = join(dir, 'j');
    await prepare(path);
    const { journal, found } = await SsdJournalFile.open(path, 4);
    expect(found.decoded.records).toEqual([]);
    await journal.close();
    const again = await SsdJournalFile.open(path, 4);
    expect(again.found.decoded.header?.numLayers).toBe(4);
    await again.journal.close();
  });

  it('compacts to a snapshot of the live SSD entries', async () => {
    const path = join(dir, 'j');
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
});
