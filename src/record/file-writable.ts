/**
 * The MCAP writer's output: an append-only file written through a FileHandle (libuv's thread
 * pool, so a slow disk never blocks the control loop's event loop), with fsync on request.
 * Refuses to overwrite: an episode file that exists already is somebody's data.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { IWritable } from '@mcap/core';

export class FileWritable implements IWritable {
  private offset = 0n;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
  ) {}

  /** Creates `file` (it must not exist). */
  static async create(file: string): Promise<FileWritable> {
    return new FileWritable(file, await open(file, 'wx'));
  }

  position(): bigint {
    return this.offset;
  }

  async write(buffer: Uint8Array): Promise<void> {
    let done = 0;
    while (done < buffer.byteLength) {
      const { bytesWritten } = await this.fh.write(buffer, done, buffer.byteLength - done);
      done += bytesWritten;
      // Count what reached the file as it goes: a full disk mid-buffer leaves position() true.
      this.offset += BigInt(bytesWritten);
    }
  }

  /** Data and size to the disk (fdatasync): what is written survives a power loss from here on. */
  async sync(): Promise<void> {
    await this.fh.datasync();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close();
  }
}
