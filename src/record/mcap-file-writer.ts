/**
 * One episode file being written, on the writer thread: @mcap/core's McapWriter over an async file
 * handle, its open chunk closed and the file fdatasync'd at least once per flush interval.
 * McapWriter computes CRCs and copies chunks in JavaScript (~100 MB/s here), which is why this
 * runs off the station's thread: a second of three cameras is ~2 MB, tens of milliseconds a loop
 * must never wait for.
 */
import { McapWriter } from '@mcap/core';
import { FileWritable } from './file-writable.js';
import type { ChannelSpec, QueuedMessage } from './writer-protocol.js';

export function ioReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return 'the disk is full';
  if (code === 'EDQUOT') return 'the disk quota is used up';
  if (code === 'EACCES' || code === 'EPERM') return 'the folder is not writable';
  if (code === 'EROFS') return 'the disk is read-only';
  if (code === 'ENOENT') return 'the folder does not exist';
  if (code === 'EEXIST') return 'a file of that name exists already (episode files are never overwritten)';
  return e instanceof Error ? e.message : String(e);
}

export class McapFileWriter {
  private readonly writer: McapWriter;
  private readonly channelIds: number[] = [];
  private readonly sequences: number[] = [];
  private flushDue = false;
  private readonly timer: NodeJS.Timeout;
  messages = 0;
  dataBytes = 0;
  syncs = 0;

  private constructor(
    private readonly out: FileWritable,
    chunkBytes: number,
    flushIntervalMs: number,
  ) {
    // @mcap/core 2.2 has no flush call: it closes the open chunk once the chunk is larger than
    // chunkSize, compared with `>`, so a threshold that reads 0 while a flush is due closes the
    // chunk at the next message. (The crash tests check that a killed recording keeps its chunks.)
    const threshold = { valueOf: () => (this.flushDue ? 0 : chunkBytes) };
    this.writer = new McapWriter({ writable: out, chunkSize: threshold as unknown as number });
    this.timer = setInterval(() => {
      this.flushDue = true;
    }, flushIntervalMs);
  }

  /** Creates the file (never over an existing one) with its header, channels and metadata, synced. */
  static async create(o: {
    file: string;
    library: string;
    channels: readonly ChannelSpec[];
    metadataName: string;
    metadata: Record<string, string>;
    chunkBytes: number;
    flushIntervalMs: number;
  }): Promise<McapFileWriter> {
    const out = await FileWritable.create(o.file);
    const w = new McapFileWriter(out, o.chunkBytes, o.flushIntervalMs);
    try {
      await w.writer.start({ profile: 'ros2', library: o.library });
      const schemaIds = new Map<string, number>();
      for (const ch of o.channels) {
        let schemaId = schemaIds.get(ch.schemaName);
        if (schemaId === undefined) {
          schemaId = await w.writer.registerSchema({
            name: ch.schemaName,
            encoding: 'ros2msg',
            data: new TextEncoder().encode(ch.schemaText),
          });
          schemaIds.set(ch.schemaName, schemaId);
        }
        w.channelIds.push(
          await w.writer.registerChannel({
            topic: ch.topic,
            schemaId,
            messageEncoding: 'cdr',
            metadata: new Map([['offered_qos_profiles', ch.qosYaml]]),
          }),
        );
        w.sequences.push(0);
      }
      await w.writer.addMetadata({ name: o.metadataName, metadata: new Map(Object.entries(o.metadata)) });
      await out.sync();
      w.syncs += 1;
    } catch (e) {
      clearInterval(w.timer);
      await out.close().catch(() => undefined);
      throw e;
    }
    return w;
  }

  get fileBytes(): number {
    return Number(this.out.position());
  }

  async write(messages: readonly QueuedMessage[]): Promise<void> {
    for (const m of messages) {
      const sequence = this.sequences[m.channel]++;
      const before = this.out.position();
      await this.writer.addMessage({
        channelId: this.channelIds[m.channel],
        sequence,
        logTime: m.logTime,
        publishTime: m.logTime,
        data: m.data,
      });
      this.messages += 1;
      this.dataBytes += m.data.byteLength;
      // The flush closed the chunk (the file grew): put it on the disk.
      if (this.flushDue && this.out.position() !== before) {
        this.flushDue = false;
        await this.out.sync();
        this.syncs += 1;
      }
    }
  }

  /** Writes the end metadata, the summary and the footer, and syncs. */
  async finish(metadataName: string, metadata: Record<string, string>): Promise<void> {
    clearInterval(this.timer);
    await this.writer.addMetadata({ name: metadataName, metadata: new Map(Object.entries(metadata)) });
    await this.writer.end();
    await this.out.sync();
    this.syncs += 1;
  }

  /** Stops without finishing (after a failure): what is on the disk stays as it is. */
  async abandon(): Promise<void> {
    clearInterval(this.timer);
    await this.out.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.out.close();
  }
}
