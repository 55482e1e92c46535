/**
 * Episode files from rollouts that do not need the wall clock: the emulated cell on virtual time
 * (the recording path is the same on any clock) and the sim on stepped physics. A camera policy's
 * rollout, whose rendered cameras run on the wall clock, is in rig-rollout-recording.rt.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { readIndexed } from '../helpers/mcap.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';
import { TOPICS } from '../../src/record/episode-format.js';

test('a rig rollout on the emulated cell (virtual time) leaves an episode file: joint states every control step, applied commands, phases and chunks, registered in the store with its rollout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-rig-record-'));
  try {
    const layouts = join(dir, 'bottles.json');
    const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 });
    writeFileSync(layouts, serializeLayoutSet(set));
    const cfg = join(dir, 'cell.json');
    writeFileSync(cfg, JSON.stringify({ type: 'yam-cell', clock: 'virtual' }));
    const data = join(dir, 'data');
    const r = await runTandem([
      'rig',
      'rollout',
      '--policy',
      'code:bottles-in-the-bin',
      '--layouts',
      layouts,
      '--layout',
      '0',
      '--seconds',
      '2',
      '--rig-config',
      cfg,
      '--data',
      data,
      '--score-from-cell',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.recording.status, 'finished');
    assert.ok(j.episodeFile.startsWith(join(data, 'episodes')), j.episodeFile);
    const ep = await readIndexed(j.episodeFile);
    const states = ep.byTopic.get(TOPICS.jointStates)!;
    const commands = ep.byTopic.get(TOPICS.jointCommands)!;
    // Every control step's measured state and applied command; the settle phase's states after them.
    assert.equal(commands.length, j.steps);
    assert.ok(states.length > j.steps, `${states.length} states for ${j.steps} steps plus the settle`);
    for (let i = 1; i < states.length; i++) assert.ok(states[i].logTime >= states[i - 1].logTime, 'in time order');
    const names = states[0].message.name as string[];
    assert.deepEqual(names.slice(0, 7), [
      'left_joint1',
      'left_joint2',
      'left_joint3',
      'left_joint4',
      'left_joint5',
      'left_joint6',
      'left_gripper',
    ]);
    // The measured arm moves: the recorded positions are the rig's, not a constant.
    const first = states[0].message.position as Float64Array;
    const lastPos = states[states.length - 1].message.position as Float64Array;
    assert.ok(
      first.some((x, k) => Math.abs(x - lastPos[k]) > 0.01),
      'the code policy moved an arm, and the file shows it',
    );
    const events = ep.byTopic.get(TOPICS.events)!.map((e) => e.message as { kind: string; detail_json: string });
    const phases = events
      .filter((e) => e.kind === 'phase')
      .map((e) => (JSON.parse(e.detail_json) as { phase: string }).phase);
    assert.deepEqual(phases, ['start', 'settle', 'end']);
    assert.equal(events.filter((e) => e.kind === 'chunk').length, j.chunks);
    const meta = ep.metadata.get('tandem.episode')!;
    assert.equal(meta.get('layout_set_sha256'), set.sha256);
    assert.equal(meta.get('layout_index'), '0');
    assert.equal(meta.get('policy_spec'), 'code:bottles-in-the-bin');
    assert.equal(meta.get('rig'), 'yam-cell');
    assert.match(meta.get('calibrations') ?? '', /^emulated-cell:[0-9a-f]{64}$/);
    assert.match(meta.get('tandem_version') ?? '', /^\d+\.\d+\.\d+/);
    assert.equal(ep.metadata.get('tandem.episode.end')!.get('outcome'), 'completed');
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rollout = store.getRollout(j.rolloutId)!;
      assert.equal(rollout.episodeFile, j.episodeFile);
      const rec = store.findRecordingByFile(j.episodeFile)!;
      assert.equal(rec.state, 'finished');
      assert.equal(rec.rolloutId, j.rolloutId);
      const timing = ep.byTopic.get(TOPICS.stepTiming) ?? [];
      assert.equal(timing.length, j.steps, 'one step-timing record per control step');
      // Every message in the file is counted.
      assert.equal(
        rec.messages,
        [...ep.byTopic.values()].reduce((n, m) => n + m.length, 0),
      );
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sim rollout --record writes the same format, and recording changes nothing in the rollout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sim-record-'));
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 1, seed: 4 })),
    );
    const args = [
      'sim',
      'rollout',
      '--policy',
      'code:bottles-in-the-bin',
      '--layouts',
      layouts,
      '--layout',
      '0',
      // 2 s: the policy has moved the arms and objects by then, so equal final states mean the
      // recording changed nothing; the run happens twice, so every second counts double.
      '--seconds',
      '2',
      '--json',
    ];
    const plain = await runTandem(args);
    const recorded = await runTandem([...args, '--record', join(dir, 'episodes')]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(recorded.code, 0, recorded.stderr);
    const a = JSON.parse(plain.stdout);
    const b = JSON.parse(recorded.stdout);
    assert.equal(b.finalStateHash, a.finalStateHash);
    const ep = await readIndexed(b.episodeFile);
    assert.equal(ep.byTopic.get(TOPICS.jointCommands)!.length, b.steps);
    assert.equal(ep.metadata.get('tandem.episode')!.get('kind'), 'sim');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sim sweep --record: one episode file per rollout, from the worker threads, each registered and linked in the store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sweep-record-'));
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 5 })),
    );
    const data = join(dir, 'data');
    const r = await runTandem([
      'sim',
      'sweep',
      '--policy',
      'code:hold',
      '--layouts',
      layouts,
      '--repeats',
      '2',
      '--workers',
      '2',
      '--seconds',
      '1',
      '--data',
      data,
      '--record',
      join(dir, 'episodes'),
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({ kind: 'sim' });
      assert.equal(rows.length, 4);
      const files = new Set(rows.map((row) => row.episodeFile));
      assert.equal(files.size, 4, 'a file of its own per rollout');
      for (const row of rows) {
        const rec = store.findRecordingByFile(row.episodeFile!)!;
        assert.equal(rec.state, 'finished');
        assert.equal(rec.rolloutId, row.id);
        const ep = await readIndexed(row.episodeFile!);
        assert.equal(ep.byTopic.get(TOPICS.jointCommands)!.length, 50, '1 s at 50 Hz');
        const meta = ep.metadata.get('tandem.episode')!;
        assert.equal(meta.get('kind'), 'sim');
        assert.equal(meta.get('layout_index'), String(row.layoutIndex));
        assert.equal(meta.get('seed'), String(row.seed));
      }
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
