/**
 * Rig rollouts that need the wall clock: a policy server that never answers (the watchdog's holds
 * need time to pass while the loop awaits the policy) and Ctrl-C mid-rollout. The rest of the rig
 * rollout's behaviour is tested on virtual time in rig-rollout.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { startServeProcess } from '../policy/serve-process.js';
import { until } from '../helpers/until.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';

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
  writeFileSync(model, buildLinearPolicyModel({ horizon: HORIZON, seed: 3, cameras: [], steadyGrippers: 1 }).bytes);
  // The embedded emulated YAM, with the longest motor-reply deadline the driver accepts: this test
  // machine's cores are shared, and a starved process should not read as a silent motor.
  const rigConfig = join(dir, 'rig.json');
  writeFileSync(rigConfig, JSON.stringify({ type: 'yam-emulated', transport: 'slcan', replyDeadlineMs: 350 }));
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

test('a policy server that never answers: the rig holds, the rollout is aborted (policy timeout) and the rig ends damped', async () => {
  const f = fixture();
  // A real server that takes 3 s per answer: far past the 400 ms deadline, a hung policy to the rig.
  const server = await startServeProcess(['--policy', `onnx:${f.model}`, '--port', '0', '--added-latency-ms', '3000']);
  try {
    const r = await runTandem(rigArgs(f, server.url, ['--timeout-ms', '400', '--blank-cameras']));
    assert.equal(r.code, 3, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'aborted');
    assert.match(j.reason, /^policy timeout: /);
    assert.equal(j.progress, null);
    assert.equal(j.steps, 0, 'no action was ever applied');
    assert.equal(j.finalMode, 'damped');
    // The rig was kept ticking while it waited: its watchdog held the arm, no motor went silent.
    assert.ok((j.safetyEventsByKind['watchdog-hold'] ?? 0) > 0, JSON.stringify(j.safetyEventsByKind));
    assert.equal(j.safetyEventsByKind['fault-hold'], undefined);
    const text = await runTandem(
      rigArgs(f, server.url, ['--timeout-ms', '400', '--blank-cameras']).filter((a) => a !== '--json'),
    );
    assert.equal(text.code, 3);
    assert.match(text.stdout, /: aborted: policy timeout: /);
    // Black frames: stored, and said to be, a rehearsal.
    assert.match(
      text.stdout,
      /rig damped after the rollout\nstored as rollout \d+ \(a rehearsal, not a result: the policy saw black frames \(--blank-cameras\)\)\nrecorded .*\.mcap \(/,
    );
  } finally {
    server.child.kill('SIGINT');
    await server.exited;
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('Ctrl-C during a rig rollout holds, damps and exits 130', async () => {
  const f = fixture();
  try {
    const child = spawn(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/tandem.js'), ...rigArgs(f, `onnx:${f.model}`).map((a) => (a === '1' ? '30' : a))],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Interrupt once the command says the rollout runs (its Ctrl-C handling is in place), not after a guess.
    await until(() => /^Running .* Ctrl-C stops it/m.test(err) || child.exitCode !== null, 60_000);
    child.kill('SIGINT');
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(guard);
    assert.equal(code, 130, err);
    const j = JSON.parse(out);
    assert.equal(j.status, 'aborted');
    assert.equal(j.reason, 'stopped by the operator');
    assert.ok(j.steps < 1500, `stopped early (${j.steps} steps)`);
    assert.equal(j.finalMode, 'damped');
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});
