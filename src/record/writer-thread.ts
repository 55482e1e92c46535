/**
 * The episode-file writer thread: every EpisodeRecorder of the process hands its encoded messages
 * here, in batches, and this thread does the MCAP work (chunks, CRCs, indexes) and the disk I/O.
 * One file's messages are written strictly in the order they were sent.
 */
import { parentPort } from 'node:worker_threads';
import { McapFileWriter, ioReason } from './mcap-file-writer.js';
import type { FromWriter, ToWriter } from './writer-protocol.js';

const port = parentPort!;
const send = (m: FromWriter): void => port.postMessage(m);
const files = new Map<number, { writer: McapFileWriter; failed: boolean }>();
/** Each file's work runs one step after the other. */
const chains = new Map<number, Promise<void>>();

function run(id: number, step: () => Promise<void>): void {
  const next = (chains.get(id) ?? Promise.resolve()).then(step);
  chains.set(id, next);
}

port.on('message', (m: ToWriter) => {
  if (m.type === 'open') {
    run(m.id, async () => {
      try {
        const writer = await McapFileWriter.create(m);
        files.set(m.id, { writer, failed: false });
        send({ type: 'opened', id: m.id });
      } catch (e) {
        send({ type: 'open-failed', id: m.id, reason: ioReason(e) });
      }
    });
  } else if (m.type === 'write') {
    run(m.id, async () => {
      const f = files.get(m.id);
      if (!f || f.failed) return;
      try {
        await f.writer.write(m.messages);
        const w = f.writer;
        send({
          type: 'written',
          id: m.id,
          dataBytes: w.dataBytes,
          fileBytes: w.fileBytes,
          messages: w.messages,
          syncs: w.syncs,
        });
      } catch (e) {
        f.failed = true;
        await f.writer.abandon();
        send({ type: 'failed', id: m.id, reason: ioReason(e) });
      }
    });
  } else if (m.type === 'close') {
    run(m.id, async () => {
      const f = files.get(m.id);
      files.delete(m.id);
      chains.delete(m.id);
      if (!f) return;
      const t0 = performance.now();
      let failure: string | undefined;
      if (!f.failed) {
        try {
          await f.writer.finish(m.metadataName, m.metadata);
          await f.writer.close();
        } catch (e) {
          failure = ioReason(e);
          await f.writer.abandon();
        }
      }
      send({
        type: 'closed',
        id: m.id,
        fileBytes: f.writer.fileBytes,
        messages: f.writer.messages,
        syncs: f.writer.syncs,
        closeWorkMs: performance.now() - t0,
        failure,
      });
    });
  }
});
