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

test('rig rollout on yam-can: the policy runs through the rig thread over socat ptys; every motor commanded, none left to its own watchdog', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-yam-can-rollout-'));
  const emu = await startEmulatorThread();
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(layouts, serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })));
    const model = join(dir, 'policy.onnx');
    writeFileSync(model, buildLinearPolicyModel({ horizon: 10, seed: 3, cameras: [] }).bytes);
    const rigConfig = join(dir, 'rig.json');
    writeFileSync(rigConfig, JSON.stringify({ type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 }));
    const r = await runTandem(['rig', 'rollout', '--policy', `onnx:${model}`, '--layouts', layouts, '--layout', '0', '--seconds', '1', '--rig-config', rigConfig, '--data', join(dir, 'data'), '--json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.status, 'valid');
    assert.equal(out.rig, 'yam-can');
    assert.equal(out.steps, 50, '1 s at 50 Hz');
    assert.equal(out.finalMode, 'damped');
    // The seeded linear model asks for far-off targets: the supervisor in the rig thread clamps them, and says so.
    assert.ok((out.safetyEventsByKind['position-clamped'] ?? 0) + (out.safetyEventsByKind['velocity-clamped'] ?? 0) > 0, JSON.stringify(out.safetyEventsByKind));
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
