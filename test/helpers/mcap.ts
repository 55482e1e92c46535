/**
 * Reads an episode file with @mcap/core's *indexed* reader — the summary, chunk indexes and
 * message indexes that `ros2 bag` and Foxglove seek with, a different code path from tandem's own
 * streaming reader — and decodes every message with the schema text the file carries (not
 * tandem's built-in definitions), as an outside tool would.
 */
import { open } from 'node:fs/promises';
import { McapIndexedReader } from '@mcap/core';
import { parse } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';

export interface IndexedEpisode {
  readonly reader: McapIndexedReader;
  /** Decoded messages per topic, in log-time order. */
  readonly byTopic: Map<string, { logTime: bigint; sequence: number; message: Record<string, unknown> }[]>;
  readonly metadata: Map<string, Map<string, string>>;
}

export async function readIndexed(file: string): Promise<IndexedEpisode> {
  const fh = await open(file, 'r');
  try {
    const size = BigInt((await fh.stat()).size);
    const reader = await McapIndexedReader.Initialize({
      readable: {
        size: () => Promise.resolve(size),
        read: async (offset, length) => {
          const buf = new Uint8Array(Number(length));
          await fh.read(buf, 0, buf.byteLength, Number(offset));
          return buf;
        },
      },
    });
    const decoders = new Map<number, MessageReader>();
    const byTopic: IndexedEpisode['byTopic'] = new Map();
    for await (const m of reader.readMessages()) {
      const channel = reader.channelsById.get(m.channelId)!;
      let dec = decoders.get(m.channelId);
      if (!dec) {
        const schema = reader.schemasById.get(channel.schemaId)!;
        dec = new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true }));
        decoders.set(m.channelId, dec);
      }
      const list = byTopic.get(channel.topic) ?? [];
      list.push({
        logTime: m.logTime,
        sequence: m.sequence,
        message: dec.readMessage(m.data) as Record<string, unknown>,
      });
      byTopic.set(channel.topic, list);
    }
    const metadata = new Map<string, Map<string, string>>();
    for await (const md of reader.readMetadata()) metadata.set(md.name, md.metadata);
    return { reader, byTopic, metadata };
  } finally {
    await fh.close();
  }
}
