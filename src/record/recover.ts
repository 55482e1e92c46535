/**
 * `tandem record recover`: a file cut off mid-write (SIGKILL, power loss, a full disk) holds every
 * chunk that was closed before the cut. This rewrites that readable prefix — header, schemas,
 * channels, metadata and every message of every complete chunk — into a new, finished file with
 * indexes and statistics, and says what it kept. The input is never changed.
 */
import { unlink } from 'node:fs/promises';
import { McapWriter } from '@mcap/core';
import { FileWritable } from './file-writable.js';
import { EpisodeFileError, scanEpisodeFile } from './episode-file-reader.js';
import { RecordingError } from './episode-recorder.js';

export const RECOVERED_METADATA_NAME = 'tandem.recovered';

export interface RecoveryReport {
  readonly input: string;
  readonly output: string | undefined;
  /** The input was finished already: nothing was written. */
  readonly alreadyComplete: boolean;
  readonly keptMessages: number;
  readonly keptByTopic: Readonly<Record<string, number>>;
  /** Seconds of messages kept, first to last log time. */
  readonly keptSeconds: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
  /** Why the input could not be read to its end. */
  readonly problem: string | undefined;
}

export async function recoverEpisodeFile(input: string, output: string): Promise<RecoveryReport> {
  // First pass: is there anything to do? (Cheap next to a recording's size; keeps the output
  // from being created for a finished file or for garbage.)
  const probe = await scanEpisodeFile(input, () => undefined);
  if (probe.complete) {
    return {
      input,
      output: undefined,
      alreadyComplete: true,
      keptMessages: 0,
      keptByTopic: {},
      keptSeconds: 0,
      inputBytes: probe.fileBytes,
      outputBytes: 0,
      problem: undefined,
    };
  }
  let out: FileWritable;
  try {
    out = await FileWritable.create(output);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new RecordingError(
      `Cannot create ${output}: ${code === 'EEXIST' ? 'it exists already (recover never overwrites; choose another -o)' : code === 'EACCES' ? 'the folder is not writable' : (e as Error).message}.`,
    );
  }
  const writer = new McapWriter({ writable: out });
  const schemaIds = new Map<number, number>();
  const channelIds = new Map<number, number>();
  const channelTopics = new Map<number, string>();
  const keptByTopic: Record<string, number> = {};
  let started = false;
  let kept = 0;
  let first: bigint | undefined;
  let last: bigint | undefined;
  let result;
  try {
    result = await scanEpisodeFile(input, async (r) => {
      switch (r.type) {
        case 'Header':
          await writer.start({ profile: r.profile, library: r.library });
          started = true;
          break;
        case 'Schema':
          if (!schemaIds.has(r.id))
            schemaIds.set(
              r.id,
              await writer.registerSchema({ name: r.name, encoding: r.encoding, data: r.data.slice() }),
            );
          break;
        case 'Channel':
          if (!channelIds.has(r.id)) {
            const schemaId = r.schemaId === 0 ? 0 : schemaIds.get(r.schemaId);
            if (schemaId === undefined)
              throw new EpisodeFileError(
                `${input}: channel ${r.topic} names schema ${r.schemaId}, which the file never defines.`,
              );
            channelIds.set(
              r.id,
              await writer.registerChannel({
                topic: r.topic,
                schemaId,
                messageEncoding: r.messageEncoding,
                metadata: new Map(r.metadata),
              }),
            );
            channelTopics.set(r.id, r.topic);
          }
          break;
        case 'Message': {
          const channelId = channelIds.get(r.channelId);
          if (channelId === undefined) break;
          await writer.addMessage({
            channelId,
            sequence: r.sequence,
            logTime: r.logTime,
            publishTime: r.publishTime,
            data: r.data.slice(),
          });
          kept += 1;
          const topic = channelTopics.get(r.channelId)!;
          keptByTopic[topic] = (keptByTopic[topic] ?? 0) + 1;
          if (first === undefined || r.logTime < first) first = r.logTime;
          if (last === undefined || r.logTime > last) last = r.logTime;
          break;
        }
        case 'Metadata':
          await writer.addMetadata({ name: r.name, metadata: new Map(r.metadata) });
          break;
        default:
          break; // indexes, statistics and the footer are rebuilt by the writer
      }
    });
    if (!started) throw new EpisodeFileError(`${input} has no readable MCAP header: nothing can be recovered from it.`);
    await writer.addMetadata({
      name: RECOVERED_METADATA_NAME,
      metadata: new Map([
        ['from', input],
        ['problem', result.problem ?? ''],
        ['kept_messages', String(kept)],
        ['recovered_at', new Date().toISOString()],
      ]),
    });
    await writer.end();
    await out.sync();
  } catch (e) {
    await out.close().catch(() => undefined);
    await unlink(output).catch(() => undefined); // a half-written output is worth nothing; the input is untouched
    throw e;
  }
  await out.close();
  const keptSeconds = first === undefined || last === undefined ? 0 : Number(last - first) / 1e9;
  return {
    input,
    output,
    alreadyComplete: false,
    keptMessages: kept,
    keptByTopic,
    keptSeconds,
    inputBytes: result.fileBytes,
    outputBytes: Number(out.position()),
    problem: result.problem,
  };
}
