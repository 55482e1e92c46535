/** Messages between an EpisodeRecorder (the station's thread) and the episode-file writer thread. */

export interface ChannelSpec {
  readonly topic: string;
  readonly schemaName: string;
  readonly schemaText: string;
  readonly qosYaml: string;
}

export interface QueuedMessage {
  readonly channel: number; // index into the file's channel list
  readonly logTime: bigint;
  readonly data: Uint8Array;
}

export type ToWriter =
  | {
      type: 'open';
      id: number;
      file: string;
      library: string;
      channels: readonly ChannelSpec[];
      metadataName: string;
      metadata: Record<string, string>;
      flushIntervalMs: number;
      chunkBytes: number;
    }
  | { type: 'write'; id: number; messages: QueuedMessage[] }
  | { type: 'close'; id: number; metadataName: string; metadata: Record<string, string> };

export type FromWriter =
  | { type: 'opened'; id: number }
  | { type: 'open-failed'; id: number; reason: string }
  /** After each batch: bytes of message data written so far (for backpressure), the file's size, syncs. */
  | { type: 'written'; id: number; dataBytes: number; fileBytes: number; messages: number; syncs: number }
  | { type: 'failed'; id: number; reason: string }
  | {
      type: 'closed';
      id: number;
      fileBytes: number;
      messages: number;
      syncs: number;
      closeWorkMs: number;
      failure?: string;
    };
