// `tandem rig rollout` on a 'yam-can' rig as a lab configures it: the station's rig thread drives
// both arms over socat ptys, the emulated arms run in this test's own thread. The rollout runs its
// length, every motor was commanded, none damped by its own watchdog, and the arms end damped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { startEmulatorThread } from '../helpers/emulator-thread.js';
import { decodeMessage, scanEpisodeFile } from '../../src/record/episode-file-reader.js';
import { EPISODE_END_METADATA_NAME, TOPICS } from '../../src/record/episode-format.js';

test('rig rollout on yam-can: the policy runs through the rig thread over socat ptys; every motor commanded, none left to its own watchdog; the episode file holds every motor cycle and the loop statistics', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-yam-can-rollout-'));
  const emu = await startEmulatorThread();
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })),
    );
    const model = join(dir, 'policy.onnx');
    writeFileSync(model, buildLinearPolicyModel({ horizon: 10, seed: 3, cameras: [] }).bytes);
    const rigConfig = join(dir, 'rig.json');
    writeFileSync(
      rigConfig,
      JSON.stringify({ type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 }),
    );
    const r = await runTandem([
      'rig',
      'rollout',
      '--policy',
      `onnx:${model}`,
      '--layouts',
      layouts,
      '--layout',
      '0',
      '--seconds',
      '1',
      '--rig-config',
      rigConfig,
      '--data',
      join(dir, 'data'),
      '--json',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.status, 'valid');
    assert.equal(out.rig, 'yam-can');
    assert.equal(out.steps, 50, '1 s at 50 Hz');
    assert.equal(out.finalMode, 'damped');
    // The seeded linear model asks for far-off targets: the supervisor in the rig thread clamps them, and says so.
    assert.ok(
      (out.safetyEventsByKind['position-clamped'] ?? 0) + (out.safetyEventsByKind['velocity-clamped'] ?? 0) > 0,
      JSON.stringify(out.safetyEventsByKind),
    );
    // The motor loop's statistics: in the report, and in the episode file's end metadata.
    assert.equal(out.motorLoop.measured_by, 'rig thread');
    assert.equal(out.motorLoop.rate_hz, 250);
    assert.ok(
      out.motorLoop.cycles >= 250,
      `the rig thread ran its loop through the episode (${out.motorLoop.cycles} cycles)`,
    );
    assert.deepEqual(out.recording.problems, []);
    const cycles: number[] = [];
    let end: Record<string, string> = {};
    const channels = new Map<number, { topic: string; schemaId: number }>();
    const schemas = new Map<number, string>();
    await scanEpisodeFile(out.episodeFile, (r) => {
      if (r.type === 'Schema') schemas.set(r.id, r.name);
      else if (r.type === 'Channel') channels.set(r.id, { topic: r.topic, schemaId: r.schemaId });
      else if (r.type === 'Metadata' && r.name === EPISODE_END_METADATA_NAME) end = Object.fromEntries(r.metadata);
      else if (r.type === 'Message' && channels.get(r.channelId)?.topic === TOPICS.rigCycles)
        cycles.push(
          (decodeMessage(schemas.get(channels.get(r.channelId)!.schemaId)!, r.data) as { cycle: number }).cycle,
        );
    });
    assert.deepEqual(JSON.parse(end.loop_stats), out.motorLoop);
    // 1 s of steps and 0.5 s of settle at the motors' 250 Hz, every cycle numbered without a gap.
    assert.ok(cycles.length >= 300, `${cycles.length} motor cycles recorded`);
    assert.ok(
      cycles.every((c, i) => i === 0 || c === cycles[i - 1] + 1),
      'consecutive cycle numbers',
    );
    assert.equal(end.rig_cycles_lost, '0');
    const st = await emu.status();
    for (const side of ['left', 'right'] as const) {
      for (const m of st.motors[side]!) {
        assert.ok(m.mits > 0, `the ${side} motor ${m.id} was commanded`);
        assert.equal(m.everLost, false, `the ${side} motor ${m.id} never damped by its own watchdog`);
        assert.equal(m.status, 0, `the ${side} motor ${m.id} is disabled after the rollout`);
      }
    }
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
