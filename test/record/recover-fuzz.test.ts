/**
 * Property test of `tandem record recover` on damaged files (fast-check, fixed seed): a small
 * chunked episode file cut at any byte and with bytes flipped anywhere is recovered to a finished
 * file holding at most what was written, or refused with one sentence — never another error, never
 * a half-written output left behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { McapWriter, type IWritable } from '@mcap/core';
import { recoverEpisodeFile } from '../../src/record/recover.js';
import { EpisodeFileError, scanEpisodeFile } from '../../src/record/episode-file-reader.js';
import { RecordingError } from '../../src/record/episode-recorder.js';

const SEED = 1311;
const MESSAGES = 60;

class MemoryWritable implements IWritable {
  private readonly parts: Uint8Array[] = [];
  private size = 0n;
  position(): bigint {
    return this.size;
  }
  write(buffer: Uint8Array): Promise<void> {
    this.parts.push(buffer.slice());
    this.size += BigInt(buffer.byteLength);
    return Promise.resolve();
  }
  bytes(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

/** A finished MCAP of MESSAGES messages on two channels, in small chunks. */
async function episodeBytes(): Promise<Uint8Array> {
  const w = new MemoryWritable();
  const writer = new McapWriter({ writable: w, chunkSize: 512 });
  await writer.start({ profile: 'ros2', library: 'tandem test' });
  const schema = await writer.registerSchema({
    name: 'std_msgs/msg/String',
    encoding: 'ros2msg',
    data: new TextEncoder().encode('string data'),
  });
  const a = await writer.registerChannel({
    topic: '/a',
    schemaId: schema,
    messageEncoding: 'cdr',
    metadata: new Map(),
  });
  const b = await writer.registerChannel({
    topic: '/b',
    schemaId: schema,
    messageEncoding: 'cdr',
    metadata: new Map([['k', 'v']]),
  });
  for (let i = 0; i < MESSAGES; i++) {
    await writer.addMessage({
      channelId: i % 2 ? b : a,
      sequence: i,
      logTime: BigInt(i) * 10_000_000n,
      publishTime: BigInt(i) * 10_000_000n,
      data: new Uint8Array(40).fill(i),
    });
  }
  await writer.addMetadata({ name: 'tandem.episode', metadata: new Map([['seed', '1']]) });
  await writer.end();
  return w.bytes();
}

async function recoverOrRefuse(dir: string, bytes: Uint8Array, run: number, what: string): Promise<boolean> {
  const input = join(dir, `in-${run}.mcap`);
  const output = join(dir, `out-${run}.mcap`);
  writeFileSync(input, bytes);
  let report;
  try {
    report = await recoverEpisodeFile(input, output);
  } catch (e) {
    assert.ok(
      e instanceof EpisodeFileError || e instanceof RecordingError,
      `${what}: threw ${(e as Error)?.name}: ${(e as Error)?.message}`,
    );
    assert.ok(!e.message.includes('\n'), e.message);
    assert.equal(existsSync(output), false, 'no half-written output is left');
    return false;
  }
  assert.ok(report.keptMessages <= MESSAGES);
  if (report.output !== undefined) {
    const scan = await scanEpisodeFile(output, () => undefined);
    assert.equal(scan.complete, true, `${what}: the recovered file is finished (${scan.problem})`);
  }
  return true;
}

test('an episode file cut at any byte past its header is recovered to a finished file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-recover-fuzz-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const whole = await episodeBytes();
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.noBias(fc.integer({ min: 100, max: whole.length - 1 })), async (cut) => {
      assert.equal(
        await recoverOrRefuse(dir, whole.slice(0, cut), ++run, `cut at ${cut}`),
        true,
        `cut at ${cut} was refused`,
      );
    }),
    { seed: SEED, numRuns: 60 },
  );
});

test('an episode file cut anywhere with bytes flipped anywhere is recovered or refused in one sentence', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-recover-fuzz-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const whole = await episodeBytes();
  let run = 0;
  let recovered = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.noBias(fc.integer({ min: 0, max: whole.length })),
      fc.array(fc.tuple(fc.noBias(fc.nat({ max: whole.length })), fc.integer({ min: 1, max: 255 })), {
        minLength: 1,
        maxLength: 3,
      }),
      async (cut, flips) => {
        const bytes = whole.slice(0, cut);
        for (const [at, x] of flips) if (bytes.length > 0) bytes[at % bytes.length] ^= x;
        if (await recoverOrRefuse(dir, bytes, ++run, `cut ${cut}, flips ${JSON.stringify(flips)}`)) recovered += 1;
      },
    ),
    { seed: SEED, numRuns: 120 },
  );
  t.diagnostic(`${recovered} of ${run} damaged files recovered, the rest refused`);
});
