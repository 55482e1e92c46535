import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EpisodeRecorder, RecordingError } from '../../src/record/episode-recorder.js';
import { EpisodeFileError } from '../../src/record/episode-file-reader.js';
import { inspectEpisodeFile } from '../../src/record/inspect.js';
import { recoverEpisodeFile } from '../../src/record/recover.js';
import { TOPICS, jointNames } from '../../src/record/episode-format.js';
import { SCHEMAS } from '../../src/record/ros2-messages.js';
import { yamRigModel } from '../../src/rig/yam.js';
import type { RigState } from '../../src/rig/contract.js';
import { readIndexed } from '../helpers/mcap.js';

const MODEL = yamRigModel();
const UNIX_OFFSET_S = 1_796_000_000;

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'tandem-record-'));
}

function state(i: number, periodS = 0.004): RigState {
  const position = new Float64Array(14).map((_, k) => Math.sin(i * 0.01 + k));
  return {
    timeS: 10 + i * periodS,
    mode: 'active',
    position,
    velocity: position.map((x) => x * 2),
    effort: position.map((x) => -x),
    faults: [],
  };
}

/** Writes `steps` control steps (state + applied command) and an event every 50 steps, all at once. */
async function recordSynthetic(file: string, steps: number, opts: { chunkBytes?: number } = {}): Promise<void> {
  const rec = await EpisodeRecorder.open({
    file,
    rigModel: MODEL,
    metadata: { task: 'bottles-in-the-bin', layout_index: '3' },
    unixOffsetS: UNIX_OFFSET_S,
    chunkBytes: opts.chunkBytes,
  });
  for (let i = 0; i < steps; i++) {
    const s = state(i);
    rec.jointState(s);
    rec.command(s.timeS + 0.0001, { position: s.position.map((x) => x * 0.5) });
    if (i % 50 === 0) rec.event(s.timeS, 'chunk', 'policy', `Chunk ${i / 50} took over.`, { chunk_index: i / 50 });
  }
  const summary = await rec.close({ outcome: 'completed' });
  assert.equal(summary.status, 'finished', summary.failure);
}

test('an episode file holds joint states, applied commands and events as ROS 2 messages that an indexed reader decodes with the schemas the file carries', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'e.mcap');
    await recordSynthetic(file, 300);
    const ep = await readIndexed(file);
    assert.equal(ep.reader.header.profile, 'ros2');
    const topics = [...ep.reader.channelsById.values()];
    for (const ch of topics) {
      assert.equal(ch.messageEncoding, 'cdr');
      assert.equal(ep.reader.schemasById.get(ch.schemaId)!.encoding, 'ros2msg');
      assert.match(ch.metadata.get('offered_qos_profiles') ?? '', /reliability: 1/, `${ch.topic} offers its QoS`);
    }
    assert.equal(
      ep.reader.schemasById.get(topics.find((c) => c.topic === TOPICS.jointStates)!.schemaId)!.name,
      SCHEMAS.jointState.name,
    );
    assert.equal(ep.reader.statistics?.messageCount, 300n + 300n + 6n, 'statistics count every message');
    const states = ep.byTopic.get(TOPICS.jointStates)!;
    assert.equal(states.length, 300);
    const names = jointNames(MODEL);
    assert.equal(names.length, 14);
    for (const [i, m] of states.entries()) {
      assert.equal(m.sequence, i);
      const s = state(i);
      assert.deepEqual(m.message.name, names);
      assert.deepEqual(Array.from(m.message.position as Float64Array), Array.from(s.position));
      assert.deepEqual(Array.from(m.message.effort as Float64Array), Array.from(s.effort));
      // Log time and header stamp are the rig-clock time moved to Unix time.
      const expectNs = BigInt(UNIX_OFFSET_S * 1e9) + BigInt(Math.round(s.timeS * 1e9));
      assert.equal(m.logTime, expectNs);
      const stamp = (m.message.header as { stamp: { sec: number; nanosec: number } }).stamp;
      assert.equal(BigInt(stamp.sec) * 1_000_000_000n + BigInt(stamp.nanosec), expectNs);
    }
    const commands = ep.byTopic.get(TOPICS.jointCommands)!;
    assert.deepEqual(
      Array.from(commands[7].message.position as Float64Array),
      Array.from(state(7).position.map((x) => x * 0.5)),
    );
    const events = ep.byTopic.get(TOPICS.events)!;
    assert.equal(events.length, 6);
    assert.equal(events[2].message.kind, 'chunk');
    assert.deepEqual(JSON.parse(String(events[2].message.detail_json)), { chunk_index: 2 });
    const meta = ep.metadata.get('tandem.episode')!;
    assert.equal(meta.get('task'), 'bottles-in-the-bin');
    assert.equal(meta.get('joint_names'), names.join(','));
    assert.equal(ep.metadata.get('tandem.episode.end')!.get('outcome'), 'completed');
    const report = await inspectEpisodeFile(file);
    assert.equal(report.complete, true);
    const js = report.topics.find((t) => t.topic === TOPICS.jointStates)!;
    assert.equal(js.count, 300);
    assert.ok(Math.abs(js.rateHz - 250) < 0.5, `250 Hz states, read ${js.rateHz}`);
    assert.equal(js.gapCount, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('inspect finds a gap longer than two periods in the joint states and says when', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'gap.mcap');
    const rec = await EpisodeRecorder.open({ file, rigModel: MODEL, metadata: {}, unixOffsetS: UNIX_OFFSET_S });
    for (let i = 0; i < 100; i++) rec.jointState(state(i < 60 ? i : i + 25)); // 100 ms missing after 0.236 s
    await rec.close();
    const js = (await inspectEpisodeFile(file)).topics.find((t) => t.topic === TOPICS.jointStates)!;
    assert.equal(js.gapCount, 1);
    assert.ok(Math.abs(js.gaps[0].gapS - 0.104) < 1e-6, String(js.gaps[0].gapS));
    assert.ok(Math.abs(js.gaps[0].atS - 0.236) < 1e-6, String(js.gaps[0].atS));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file cut off anywhere is recovered to its last complete chunk: a finished file holding an exact prefix of every topic', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'full.mcap');
    await recordSynthetic(file, 600, { chunkBytes: 16 * 1024 });
    const full = await readIndexed(file);
    assert.ok(full.reader.chunkIndexes.length >= 8, `several chunks: ${full.reader.chunkIndexes.length}`);
    const bytes = readFileSync(file);
    const dataEnd = Number(full.reader.dataEndOffset);
    let previous = -1;
    for (const fraction of [0.1, 0.35, 0.6, 0.85, 0.999]) {
      const cut = join(dir, `cut-${fraction}.mcap`);
      writeFileSync(cut, bytes.subarray(0, Math.floor(dataEnd * fraction)));
      const out = join(dir, `rec-${fraction}.mcap`);
      const r = await recoverEpisodeFile(cut, out);
      assert.equal(r.alreadyComplete, false);
      assert.match(r.problem ?? '', /cut off/);
      const back = await readIndexed(out);
      assert.ok(r.keptMessages >= previous, 'a longer prefix never keeps fewer messages');
      previous = r.keptMessages;
      let kept = 0;
      for (const [topic, msgs] of back.byTopic) {
        const orig = full.byTopic.get(topic)!;
        msgs.forEach((m, i) => {
          assert.equal(m.sequence, i, `${topic}: no hole in the prefix`);
          assert.deepEqual(m.message, orig[i].message);
        });
        kept += msgs.length;
      }
      assert.equal(kept, r.keptMessages);
      assert.equal(
        back.metadata.get('tandem.episode')!.get('task'),
        'bottles-in-the-bin',
        'the episode still says what it is',
      );
      assert.equal(back.metadata.get('tandem.recovered')!.get('kept_messages'), String(kept));
    }
    assert.ok(previous > 0.9 * 1206, `cut just before the summary, nearly everything is kept (${previous} of 1206)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a corrupt chunk stops reading there: inspect and recover say so, and recover keeps every chunk before it', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'e.mcap');
    await recordSynthetic(file, 600, { chunkBytes: 16 * 1024 });
    const full = await readIndexed(file);
    const chunks = [...full.reader.chunkIndexes].sort((a, b) => Number(a.chunkStartOffset - b.chunkStartOffset));
    const victim = chunks[3];
    const bytes = Buffer.from(readFileSync(file));
    bytes[Number(victim.chunkStartOffset) + Number(victim.chunkLength) - 50] ^= 0xff; // inside the chunk's records
    const bad = join(dir, 'bad.mcap');
    writeFileSync(bad, bytes);
    const report = await inspectEpisodeFile(bad);
    assert.equal(report.complete, false);
    assert.match(report.problem ?? '', /corrupt/);
    const r = await recoverEpisodeFile(bad, join(dir, 'rec.mcap'));
    const back = await readIndexed(r.output!);
    const states = back.byTopic.get(TOPICS.jointStates)!;
    const firstLost = full.byTopic.get(TOPICS.jointStates)!.findIndex((m) => m.logTime >= victim.messageStartTime);
    assert.equal(states.length, firstLost, 'every joint state of the three good chunks, none of the damaged one');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('garbage, an empty file and a missing file get one sentence each; recover never overwrites and leaves a finished file alone', async () => {
  const dir = tmp();
  try {
    const garbage = join(dir, 'garbage.mcap');
    writeFileSync(garbage, Buffer.from('this is a PNG, honest'.repeat(100)));
    await assert.rejects(
      inspectEpisodeFile(garbage),
      (e: unknown) => e instanceof EpisodeFileError && /is not an MCAP episode file/.test(e.message),
    );
    await assert.rejects(
      recoverEpisodeFile(garbage, join(dir, 'x.mcap')),
      (e: unknown) => e instanceof EpisodeFileError && /is not an MCAP episode file/.test(e.message),
    );
    const empty = join(dir, 'empty.mcap');
    writeFileSync(empty, '');
    await assert.rejects(
      inspectEpisodeFile(empty),
      (e: unknown) => e instanceof EpisodeFileError && /not an MCAP/.test(e.message),
    );
    await assert.rejects(
      inspectEpisodeFile(join(dir, 'nope.mcap')),
      (e: unknown) => e instanceof EpisodeFileError && /no such file/.test(e.message),
    );
    const file = join(dir, 'e.mcap');
    await recordSynthetic(file, 50);
    const done = await recoverEpisodeFile(file, join(dir, 'never.mcap'));
    assert.equal(done.alreadyComplete, true);
    assert.throws(() => statSync(join(dir, 'never.mcap')), 'nothing written for a finished file');
    const cut = join(dir, 'cut.mcap');
    writeFileSync(cut, readFileSync(file).subarray(0, 3000));
    const taken = join(dir, 'taken.mcap');
    writeFileSync(taken, 'somebody else’s file');
    await assert.rejects(
      recoverEpisodeFile(cut, taken),
      (e: unknown) => e instanceof RecordingError && /exists already/.test(e.message),
    );
    assert.equal(readFileSync(taken, 'utf8'), 'somebody else’s file');
    await assert.rejects(
      EpisodeRecorder.open({ file, rigModel: MODEL, metadata: {}, unixOffsetS: 0 }),
      (e: unknown) =>
        e instanceof RecordingError && /exists already \(episode files are never overwritten\)/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
