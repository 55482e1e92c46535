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

test('a rig rollout on the emulated cell leaves an episode file: joint states every control step, applied commands, phases and chunks, registered in the store with its rollout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-rig-record-'));
  try {
    const layouts = join(dir, 'bottles.json');
    const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 });
    writeFileSync(layouts, serializeLayoutSet(set));
    const cfg = join(dir, 'cell.json');
    writeFileSync(cfg, JSON.stringify({ type: 'yam-cell', replyDeadlineMs: 350 }));
    const data = join(dir, 'data');
    const r = await runTandem(['rig', 'rollout', '--policy', 'code:bottles-in-the-bin', '--layouts', layouts, '--layout', '0', '--seconds', '2', '--rig-config', cfg, '--data', data, '--score-from-cell', '--json']);
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
    assert.deepEqual(names.slice(0, 7), ['left_joint1', 'left_joint2', 'left_joint3', 'left_joint4', 'left_joint5', 'left_joint6', 'left_gripper']);
    // The measured arm moves: the recorded positions are the rig's, not a constant.
    const first = states[0].message.position as Float64Array;
    const lastPos = states[states.length - 1].message.position as Float64Array;
    assert.ok(first.some((x, k) => Math.abs(x - lastPos[k]) > 0.01), 'the code policy moved an arm, and the file shows it');
    const events = ep.byTopic.get(TOPICS.events)!.map((e) => e.message as { kind: string; detail_json: string });
    const phases = events.filter((e) => e.kind === 'phase').map((e) => (JSON.parse(e.detail_json) as { phase: string }).phase);
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
      assert.equal(rec.messages, states.length + commands.length + events.length);
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
    writeFileSync(layouts, serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 1, seed: 4 })));
    const args = ['sim', 'rollout', '--policy', 'code:bottles-in-the-bin', '--layouts', layouts, '--layout', '0', '--seconds', '4', '--json'];
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
