/**
 * The backup file: a gzip stream of a format line followed by frames (a kind byte, a 32-bit
 * big-endian length, the payload), closed by a trailer frame holding the SHA-256 of every byte
 * before it. Frames are written and read one at a time, so memory stays bounded whatever the size
 * of the database; a file cut short lacks the trailer, and a changed byte fails gzip's CRC or the
 * checksum.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

/** An expected failure of a backup or restore, with a message for the operator. */
export class BackupError extends Error {}

const FORMAT_LINE = Buffer.from('commerce-platform-backup 1\n');

const kindCodes = { header: 0x48, table: 0x54, rows: 0x44, 'table-end': 0x45 } as const;
const TRAILER_CODE = 0x5a;
const FRAME_HEAD_BYTES = 5;

export type FrameKind = keyof typeof kindCodes;
export interface Frame {
  kind: FrameKind;
  payload: Buffer;
}

const kindsByCode = new Map(Object.entries(kindCodes).map(([kind, code]) => [code as number, kind as FrameKind]));

/** Rows are written in frames of about this size: what a backup holds in memory at a time. */
const ROWS_FRAME_BYTES = 256 * 1024;
/** A length field above this is corruption, not a frame to allocate memory for. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** What went wrong with a path, in the operator's words. */
function reason(error: unknown, path: string): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return `${dirname(path)} does not exist`;
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
    case 'EEXIST': // mkdir of a folder whose path names a file
      return 'a part of the path is not a directory';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return (error as Error).message;
  }
}

/**
 * Writes a backup to `<path>.partial` and renames it to `path` once complete and synced, so a
 * backup that fails midway never leaves a file that looks like a backup.
 */
export class BackupFileWriter {
  private readonly hash = createHash('sha256');
  // Level 3: for COPY's text output about the size of the default level 6, at half its CPU time.
  private readonly gzip = createGzip({ level: 3 });
  private readonly written: Promise<void>;
  private pendingRows: Buffer[] = [];
  private pendingBytes = 0;

  private constructor(
    readonly path: string,
    private readonly partialPath: string,
    handle: FileHandle,
  ) {
    this.written = pipeline(this.gzip, handle.createWriteStream());
    // Awaited by every write (a full disk fails the next one) and by finish().
    this.written.catch(() => undefined);
  }

  /**
   * Opens the file, creating its folder when missing (`backups/x.backup` on a fresh checkout),
   * failing at once with the reason when it cannot be written.
   */
  static async create(path: string): Promise<BackupFileWriter> {
    const target = resolve(path);
    try {
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new BackupError(`Cannot write the backup to ${path}: ${reason(error, target)}`);
    }
    const isDirectory = await stat(target).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    if (isDirectory) throw new BackupError(`Cannot write the backup to ${path}: it is a directory`);
    let handle: FileHandle;
    try {
      handle = await open(`${target}.partial`, 'w', 0o600);
    } catch (error) {
      throw new BackupError(`Cannot write the backup to ${path}: ${reason(error, target)}`);
    }
    const writer = new BackupFileWriter(target, `${target}.partial`, handle);
    await writer.put(FORMAT_LINE, true);
    return writer;
  }

  private async put(chunk: Buffer, hashed: boolean) {
    if (hashed) this.hash.update(chunk);
    if (!this.gzip.write(chunk)) await Promise.race([once(this.gzip, 'drain'), this.written]);
  }

  private async frame(code: number, payload: Buffer, hashed = true) {
    const head = Buffer.alloc(FRAME_HEAD_BYTES);
    head[0] = code;
    head.writeUInt32BE(payload.length, 1);
    await this.put(head, hashed);
    await this.put(payload, hashed);
  }

  private async flushRows() {
    if (this.pendingBytes === 0) return;
    const payload = Buffer.concat(this.pendingRows, this.pendingBytes);
    this.pendingRows = [];
    this.pendingBytes = 0;
    await this.frame(kindCodes.rows, payload);
  }

  /** A frame holding a JSON value. */
  async json(kind: Exclude<FrameKind, 'rows'>, value: unknown): Promise<void> {
    await this.flushRows();
    await this.frame(kindCodes[kind], Buffer.from(JSON.stringify(value)));
  }

  /** Rows as COPY wrote them, gathered into frames of about ROWS_FRAME_BYTES. */
  async rows(chunk: Buffer): Promise<void> {
    this.pendingRows.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= ROWS_FRAME_BYTES) await this.flushRows();
  }

  /** Writes the trailer, syncs the file to disk and gives it its name. Returns its size in bytes. */
  async finish(): Promise<number> {
    await this.flushRows();
    await this.frame(TRAILER_CODE, this.hash.digest(), false);
    this.gzip.end();
    await this.written;
    const handle = await open(this.partialPath, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(this.partialPath, this.path);
    return (await stat(this.path)).size;
  }

  /** Removes the partial file after a failure. */
  async abandon(): Promise<void> {
    this.gzip.destroy();
    await this.written.catch(() => undefined);
    await rm(this.partialPath, { force: true });
  }
}

/** Bytes received in chunks, taken in frames. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer) {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** Puts taken bytes back in front. */
  unshift(chunk: Buffer) {
    this.chunks.unshift(chunk);
    this.length += chunk.length;
  }

  /** The next `count` bytes (at most `length`). */
  take(count: number): Buffer {
    const first = this.chunks[0];
    if (count === 0 || !first) return Buffer.alloc(0);
    this.length -= count;
    if (first.length >= count) {
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
      return first.subarray(0, count);
    }
    const taken = Buffer.allocUnsafe(count);
    for (let offset = 0; offset < count;) {
      const chunk = this.chunks[0]!;
      const part = Math.min(chunk.length, count - offset);
      chunk.copy(taken, offset, 0, part);
      offset += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    return taken;
  }
}

/**
 * The frames of a backup file in order, checked as they are read: throws a BackupError when the
 * file is not a backup, is cut short or fails its checksum. Those last two are known only at the
 * end, so a caller that applies frames as they come does so in a transaction it commits after.
 */
export async function* readBackupFile(path: string): AsyncGenerator<Frame> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new BackupError(`Cannot read ${path}: ${reason(error, resolve(path))}`);
  }
  const notABackup = new BackupError(`${path} is not a backup made by \`npm run admin -- backup\``);
  const truncated = new BackupError(`${path} is truncated: it ends before the backup's end marker`);
  const corrupt = (why: string) => new BackupError(`${path} is corrupt: ${why}`);
  const source = handle.createReadStream();
  const gunzip = createGunzip();
  source.on('error', (error) => gunzip.destroy(error));
  source.pipe(gunzip);
  const hash = createHash('sha256');
  const queue = new ByteQueue();
  let decoded = 0;
  let started = false;
  let ended = false;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      decoded += chunk.length;
      queue.push(chunk);
      if (!started) {
        if (queue.length < FORMAT_LINE.length) continue;
        const line = queue.take(FORMAT_LINE.length);
        if (!line.equals(FORMAT_LINE)) throw notABackup;
        hash.update(line);
        started = true;
      }
      while (!ended && queue.length >= FRAME_HEAD_BYTES) {
        const head = queue.take(FRAME_HEAD_BYTES);
        const length = head.readUInt32BE(1);
        if (length > MAX_FRAME_BYTES) throw corrupt(`a frame claims ${length} bytes`);
        if (queue.length < length) {
          queue.unshift(head);
          break;
        }
        const payload = queue.take(length);
        if (head[0] === TRAILER_CODE) {
          if (!payload.equals(hash.digest())) throw corrupt('its checksum does not match its contents');
          ended = true;
          continue;
        }
        const kind = kindsByCode.get(head[0]!);
        if (!kind) throw corrupt(`unknown frame kind ${head[0]}`);
        hash.update(head);
        hash.update(payload);
        yield { kind, payload };
      }
      if (ended && queue.length > 0) throw corrupt('it goes on after its end marker');
    }
  } catch (error) {
    if (error instanceof BackupError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR') throw decoded === 0 ? notABackup : truncated;
    if (code === 'Z_DATA_ERROR') throw decoded === 0 ? notABackup : corrupt((error as Error).message);
    throw new BackupError(`Cannot read ${path}: ${reason(error, resolve(path))}`);
  } finally {
    source.destroy();
    gunzip.destroy();
    await handle.close().catch(() => undefined);
  }
  if (!started) throw decoded === 0 ? notABackup : truncated;
  if (!ended) throw truncated;
}
