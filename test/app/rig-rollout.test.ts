/**
 * Rig rollouts on the embedded emulated YAM on virtual time: the same policy in the sim and on the
 * rig, a served policy, a code policy refused. What needs the wall clock (a policy server that
 * never answers, Ctrl-C mid-rollout) is in rig-rollout.rt.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { startServeProcess } from '../policy/serve-process.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';

const HORIZON = 10;

/** A layout set and a camera-less ONNX policy (the emulated rig has no cameras) in a fresh folder. */
function fixture(): { dir: string; layouts: string; model: string; rigConfig: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-rig-rollout-'));
  const layouts = join(dir, 'bottles.json');
  writeFileSync(
    layouts,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })),
  );
  const model = join(dir, 'policy.onnx');
  writeFileSync(model, buildLinearPolicyModel({ horizon: HORIZON, seed: 3, cameras: [] }).bytes);
  // The embedded emulated YAM on virtual time: what these tests check does not depend on the clock.
  const rigConfig = join(dir, 'rig.json');
  writeFileSync(rigConfig, JSON.stringify({ type: 'yam-emulated', transport: 'slcan', clock: 'virtual' }));
  return { dir, layouts, model, rigConfig };
}

const rigArgs = (f: { dir: string; layouts: string; rigConfig: string }, policy: string, extra: string[] = []) => [
  'rig',
  'rollout',
  '--policy',
  policy,
  '--layouts',
  f.layouts,
  '--layout',
  '0',
  '--seconds',
  '1',
  '--rig-config',
  f.rigConfig,
  '--data',
  join(f.dir, 'data'),
  '--json',
  ...extra,
];

test('the same onnx: policy runs in the sim and on the emulated rig: same steps and chunks, the rig rollout awaits the operator score', async () => {
  const f = fixture();
  try {
    const spec = `onnx:${f.model}`;
    // One after the other: the rig rollout runs on wall time and should not share the cores with the sim.
    const sim = await runTandem([
      'sim',
      'rollout',
      '--policy',
      spec,
      '--layouts',
      f.layouts,
      '--layout',
      '0',
      '--seconds',
      '1',
      '--json',
    ]);
    const rig = await runTandem(rigArgs(f, spec));
    assert.equal(sim.code, 0, sim.stderr);
    assert.equal(rig.code, 0, rig.stdout + rig.stderr);
    const s = JSON.parse(sim.stdout);
    const r = JSON.parse(rig.stdout);
    for (const j of [s, r]) {
      assert.equal(j.status, 'valid');
      assert.equal(j.steps, 50, '1 s at 50 Hz');
      assert.equal(j.chunks, Math.ceil(50 / HORIZON), 'one chunk per horizon of steps, open loop');
      assert.equal(j.policy, 'onnx:policy.onnx');
    }
    assert.equal(typeof s.progress, 'number', 'the sim scores from its privileged end state');
    assert.equal(r.progress, null, 'the rig has no privileged end state: no invented score');
    assert.equal(r.scoring, 'awaiting operator score');
    assert.equal(r.rig, 'yam-emulated');
    assert.equal(r.horizon, HORIZON);
    assert.equal(r.finalMode, 'damped');
    // The rate achieved (and its jitter) is a timing claim: bench/rig-loop.bench.ts measures it.
    assert.ok(r.achievedHz > 0, `a control rate was measured: ${r.achievedHz} Hz`);
    assert.ok(r.inferenceMs.p50 > 0 && r.inferenceMs.max >= r.inferenceMs.p50);
    // The seeded linear model asks for far-off targets: the safety supervisor clamps them, and says so.
    assert.ok((r.safetyEventsByKind['position-clamped'] ?? 0) + (r.safetyEventsByKind['velocity-clamped'] ?? 0) > 0);
    assert.equal(
      r.safetyEvents,
      Object.values(r.safetyEventsByKind as Record<string, number>).reduce((a, b) => a + b, 0),
    );

    const text = await runTandem(rigArgs(f, spec).filter((a) => a !== '--json'));
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /valid, awaiting operator score\nsteps 50 at [\d.]+ Hz achieved/);
    assert.match(text.stdout, /chunks 5 of 10 rows; inference p50 [\d.]+ ms/);
    assert.match(
      text.stdout,
      /rig damped after the rollout\nstored as rollout 2\nrecorded .*\/episodes\/[^ ]+\.mcap \([\d.]+ MiB, \d+ messages, closed in \d+ ms\)\n$/,
    );
    // Both runs are kept as real rollouts, unscored until an operator scores them.
    const store = openStore(join(f.dir, 'data', 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({ kind: 'real' });
      assert.equal(rows.length, 2);
      assert.ok(
        rows.every((x) => x.status === 'valid' && x.effectiveProgress === null && x.calibrationSha256s.length === 0),
        'no emulated-cell mark on a motors-only rig',
      );
    } finally {
      store.close();
    }
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('a ws:// policy served by `tandem policy serve` runs on the emulated rig', async () => {
  const f = fixture();
  const server = await startServeProcess(['--policy', `onnx:${f.model}`, '--port', '0']);
  try {
    // openpi always carries the top camera: a rig config alone has no cameras, so the rig refuses, or rehearses with black frames.
    const refused = await runTandem(rigArgs(f, server.url));
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^Policy onnx:policy\.onnx reads camera cam_high, which the station config .*rig\.json does not have \(it has no cameras\); add it to 'cameras', or rehearse with --blank-cameras/,
    );
    const r = await runTandem(rigArgs(f, server.url, ['--blank-cameras']));
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'valid');
    assert.equal(j.steps, 50);
    assert.equal(j.chunks, 5);
    assert.equal(j.horizon, HORIZON);
    assert.equal(j.progress, null);
    assert.equal(j.finalMode, 'damped');
  } finally {
    server.child.kill('SIGINT');
    await server.exited;
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('on a motors-only rig a code policy is refused with its own sentence before the rig moves', async () => {
  const f = fixture();
  try {
    const r = await runTandem(rigArgs(f, 'code:bottles-in-the-bin'));
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'code:bottles-in-the-bin cannot run here: code policies read object poses the real rig cannot see; run them in the sim, or rehearse on the emulated cell (rig type yam-cell).\n',
    );
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});
