/**
 * The backup file format on its own: frames come back as written, in bounded frames; a file cut
 * anywhere, with a changed byte (unless gzip decodes it to the same contents), with data after its
 * end or that is no backup at all is refused with a BackupError; an unwritable destination fails
 * at once, naming the reason.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { BackupError, BackupFileWriter, readBackupFile, type Frame } from '../../src/kernel/backup/backup-file';
import type { BackupHeader } from '../../src/kernel/backup/backup-header';
import { verifyBackup } from '../../src/kernel/backup/restore-backup';

const dir = mkdtempSync(join(tmpdir(), 'backup-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header: BackupHeader = {
  createdAt: '2026-11-26T00:00:00.000Z',
  serverVersion: '18.0',
  snapshot: '800:805:801,803',
  migrations: [{ name: '20261121000000_foundation', checksum: 'abc' }],
  tables: [{ schema: 'public', name: 'items', columns: ['id', 'note'] }],
  sequences: [{ schema: 'public', name: 'items_id_seq', lastValue: '3', isCalled: true }],
  masterKeyFingerprint: null,
};

/** Rows in COPY's text format, in chunks as a COPY stream hands them over: 600 kB in all. */
const rowChunks = [
  Buffer.from('1\tfirst\n2\t'),
  Buffer.from('tab\\there, newline\\nthere, backslash \\\\ and null\\N\n'),
  ...Array.from({ length: 12 }, (_, index) => Buffer.from(`${index + 3}\t${randomBytes(37_500).toString('base64')}\n`)),
];
const ROW_COUNT = 14;

async function writeBackup(name: string, frames: (writer: BackupFileWriter) => Promise<void>): Promise<string> {
  const file = join(dir, name);
  const writer = await BackupFileWriter.create(file);
  await frames(writer);
  await writer.finish();
  return file;
}

const validBackup = (name: string) =>
  writeBackup(name, async (writer) => {
    await writer.json('header', header);
    await writer.json('table', { schema: 'public', name: 'items' });
    for (const chunk of rowChunks) await writer.rows(chunk);
    await writer.json('table-end', { rows: ROW_COUNT });
  });

async function readAll(file: string): Promise<Frame[]> {
  const frames: Frame[] = [];
  for await (const frame of readBackupFile(file)) frames.push(frame);
  return frames;
}

/** Rewrites a backup's decompressed contents, keeping gzip valid, so only the format's own checks can tell. */
function rewritePlain(file: string, name: string, change: (plain: Buffer) => Buffer): string {
  const changed = join(dir, name);
  writeFileSync(changed, gzipSync(change(gunzipSync(readFileSync(file)))));
  return changed;
}

describe('the backup file', () => {
  it('gives back the frames as written, rows in frames of bounded size, in a file only its owner reads', async () => {
    const file = await validBackup('valid.backup');
    const frames = await readAll(file);
    expect(frames.map((frame) => frame.kind)).toEqual(['header', 'table', 'rows', 'rows', 'table-end']);
    expect(JSON.parse(frames[0]!.payload.toString())).toEqual(header);
    const rows = frames.filter((frame) => frame.kind === 'rows');
    expect(Buffer.concat(rows.map((frame) => frame.payload)).equals(Buffer.concat(rowChunks))).toBe(true);
    // A frame is closed once it holds 256 KiB: at most one chunk more.
    for (const frame of rows) expect(frame.payload.length).toBeLessThan(256 * 1024 + 50_010);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.endsWith('.partial'))).toEqual([]);
    expect(await verifyBackup(file)).toMatchObject({ tables: 1, rows: ROW_COUNT });
  });

  it('refuses the file cut short anywhere', async () => {
    const bytes = readFileSync(await validBackup('to-cut.backup'));
    const cuts = [
      ...Array.from({ length: 30 }, (_, index) => Math.floor((bytes.length * index) / 30)),
      bytes.length - 1,
      bytes.length - 9,
    ];
    for (const cut of cuts) {
      const file = join(dir, `cut-${cut}.backup`);
      writeFileSync(file, bytes.subarray(0, cut));
      await expect(readAll(file), `cut at ${cut}`).rejects.toThrow(BackupError);
    }
    writeFileSync(join(dir, 'half.backup'), bytes.subarray(0, bytes.length >> 1));
    await expect(readAll(join(dir, 'half.backup'))).rejects.toThrow(/is truncated/);
  });

  it('refuses a changed byte in the compressed stream, and in the contents under a valid gzip', async () => {
    const file = await validBackup('to-change.backup');
    const bytes = readFileSync(file);
    const original = await readAll(file);
    // From after gzip's header (whose time and OS bytes nobody checks) to its CRC and length. A
    // change deflate decodes to the same bytes (another distance into a run) changes nothing.
    const positions = [
      ...Array.from({ length: 24 }, (_, index) => 10 + Math.floor(((bytes.length - 20) * index) / 23)),
      bytes.length - 6,
      bytes.length - 2,
    ];
    let refused = 0;
    for (const position of positions) {
      const changed = Buffer.from(bytes);
      changed[position]! ^= 0x55;
      writeFileSync(join(dir, 'changed.backup'), changed);
      const outcome = await readAll(join(dir, 'changed.backup')).catch((error: unknown) => error);
      if (outcome instanceof BackupError) refused += 1;
      else expect(outcome, `byte ${position}`).toEqual(original);
    }
    expect(refused).toBeGreaterThan(positions.length / 2);
    const flipped = rewritePlain(file, 'flipped.backup', (plain) => {
      plain[plain.length >> 1]! ^= 0x01;
      return plain;
    });
    await expect(readAll(flipped)).rejects.toThrow(/is corrupt: its checksum does not match/);
    const longer = rewritePlain(file, 'longer.backup', (plain) => Buffer.concat([plain, Buffer.from('more')]));
    await expect(readAll(longer)).rejects.toThrow(/goes on after its end marker/);
  });

  it('refuses files that are no backup', async () => {
    const cases = {
      'empty.backup': Buffer.alloc(0),
      'text.backup': Buffer.from('id,name\n1,lamp\n'),
      'other.gz': gzipSync(Buffer.from('PGDMP a dump of something else entirely')),
    };
    for (const [name, content] of Object.entries(cases)) {
      writeFileSync(join(dir, name), content);
      await expect(readAll(join(dir, name)), name).rejects.toThrow(/is not a backup made by/);
    }
    await expect(readAll(join(dir, 'absent.backup'))).rejects.toThrow(/Cannot read .*absent.backup/);
  });

  it('checks that the frames follow the header', async () => {
    const wrongTable = await writeBackup('wrong-table.backup', async (writer) => {
      await writer.json('header', header);
      await writer.json('table', { schema: 'public', name: 'others' });
    });
    await expect(verifyBackup(wrongTable)).rejects.toThrow(/unexpected table/);
    const wrongCount = await writeBackup('wrong-count.backup', async (writer) => {
      await writer.json('header', header);
      await writer.json('table', { schema: 'public', name: 'items' });
      await writer.rows(Buffer.from('1\tone\n'));
      await writer.json('table-end', { rows: 2 });
    });
    await expect(verifyBackup(wrongCount)).rejects.toThrow(/holds 1 rows, its end says 2/);
    const missingTable = await writeBackup('missing-table.backup', (writer) => writer.json('header', header));
    await expect(verifyBackup(missingTable)).rejects.toThrow(/tables are missing/);
    const noHeader = await writeBackup('no-header.backup', (writer) => writer.json('table', { name: 'items' }));
    await expect(verifyBackup(noHeader)).rejects.toThrow(/does not start with a valid header/);
  });

  it('creates a missing folder for the file, readable by its owner only', async () => {
    const created = await BackupFileWriter.create(join(dir, 'missing', 'deeper', 'x.backup'));
    await created.json('header', header);
    await created.abandon();
    expect(statSync(join(dir, 'missing', 'deeper')).isDirectory()).toBe(true);
    expect(statSync(join(dir, 'missing')).mode & 0o777).toBe(0o700);
  });

  it('fails at once, naming the reason, when the destination cannot be written, and leaves nothing behind', async () => {
    writeFileSync(join(dir, 'a-file'), 'x');
    await expect(BackupFileWriter.create(dir)).rejects.toThrow(/: it is a directory$/);
    await expect(BackupFileWriter.create(join(dir, 'a-file', 'x.backup'))).rejects.toThrow(/is not a directory$/);
    const abandoned = await BackupFileWriter.create(join(dir, 'abandoned.backup'));
    await abandoned.json('header', header);
    await abandoned.abandon();
    expect(readdirSync(dir).filter((name) => name.startsWith('abandoned'))).toEqual([]);
  });
});
