/**
 * Reading episode files, finished or not. One streaming pass (McapStreamReader) reads records in
 * file order and stops at the first thing it cannot read, so the same code inspects a finished
 * file, finds the readable prefix of a file cut off mid-write, and refuses garbage with a reason.
 * Memory stays bounded by one chunk, whatever the file's size.
 */
import { open } from 'node:fs/promises';
import { McapStreamReader, hasMcapPrefix, type TypedMcapRecord } from '@mcap/core';
import { CDR, schemaKeyOf } from './ros2-messages.js';

export class EpisodeFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EpisodeFileError';
  }
}

export interface ScanResult {
  /** The file ended with a valid footer: it was closed properly. */
  readonly complete: boolean;
  readonly fileBytes: number;
  /** Why reading stopped before the end (cut off, corrupt chunk), in words; undefined when complete. */
  readonly problem?: string;
  readonly records: number;
}

const READ_BYTES = 4 * 1024 * 1024;

function describeReadError(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  if (/crc/i.test(text)) return `a chunk is corrupt (${text})`;
  return text;
}

/**
 * Calls `visit` for every record the file holds, in order, until the end or the first unreadable
 * record (a record's bytes are valid only during its visit: copy what you keep). Throws EpisodeFileError only for a file that is not an MCAP file at all or cannot be read.
 */
export async function scanEpisodeFile(
  file: string,
  visit: (record: TypedMcapRecord) => void | Promise<void>,
): Promise<ScanResult> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new EpisodeFileError(
      `Cannot open ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message}.`,
    );
  }
  try {
    const { size } = await fh.stat();
    const head = new Uint8Array(Math.min(size, 8));
    await fh.read(head, 0, head.byteLength, 0);
    if (!hasMcapPrefix(new DataView(head.buffer)))
      throw new EpisodeFileError(`${file} is not an MCAP episode file (it does not start with the MCAP magic bytes).`);
    const reader = new McapStreamReader({ validateCrcs: true });
    const buf = new Uint8Array(READ_BYTES);
    let position = 0;
    let records = 0;
    let problem: string | undefined;
    reading: while (position < size) {
      const { bytesRead } = await fh.read(buf, 0, buf.byteLength, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      reader.append(buf.subarray(0, bytesRead));
      for (;;) {
        let record: TypedMcapRecord | undefined;
        try {
          record = reader.nextRecord();
        } catch (e) {
          problem = describeReadError(e);
          break reading;
        }
        if (!record) break;
        records += 1;
        await visit(record);
      }
    }
    const complete = problem === undefined && reader.done();
    if (!complete && problem === undefined) {
      problem =
        records === 0
          ? 'the file holds no complete record'
          : `the file ends without its summary and footer (cut off while it was being written; ${reader.bytesRemaining()} bytes of a last, incomplete record)`;
    }
    return { complete, fileBytes: size, problem, records };
  } finally {
    await fh.close();
  }
}

/** A message decoded by its schema (tandem's three ROS 2 types); undefined for other schemas. */
export function decodeMessage(schemaName: string, data: Uint8Array): unknown {
  const key = schemaKeyOf(schemaName);
  return key === undefined ? undefined : CDR.reader[key].readMessage(data);
}
