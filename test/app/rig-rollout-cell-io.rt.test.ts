// An interlock opening mid-rollout stops the arms within one control cycle, through the one
// rollout loop: the cell's PLC is a real node-opcua server (one for the file), the station's
// client is the rig's interlock source. The step-by-step checks run in this process on the
// YamCanRig driver over the byte-level motor emulator (yam-emulated: no physics world to fall
// behind real time on a loaded machine); the CLI test runs the whole thing on the emulated cell.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlcEmulator } from '../../drivers/cell-io/plc-emulator.js';
import { CellPlcClient } from '../../drivers/cell-io/plc-client.js';
import { parseCellIoConfig } from '../../drivers/cell-io/cell-io-config.js';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { STATE_DIM, type RigState, type SafetyEvent } from '../../src/rig/contract.js';
import { stationRigRegistry } from '../../src/app/rig-registry.js';
import { runRigRollout, type RigRolloutResult } from '../../src/rollout/rig-rollout.js';
import type { ActionChunk, EpisodeContext, Observation, Policy } from '../../src/policy/contract.js';
import type { EpisodeRecording } from '../../src/rollout/run-episode.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { YamCanRig } from '../../drivers/yam/yam-can-rig.js';
import type { InterlockStop } from '../../src/rig/safety.js';
import { until } from '../helpers/until.js';
import { BIN } from '../helpers/cli.js';

const HZ = 50;

let dir: string;
let plc: PlcEmulator;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-cell-io-rollout-'));
  plc = await PlcEmulator.start({ pkiDir: join(dir, 'pki'), heartbeatMs: 50 });
  // The first rollout in a process pays for loading and compiling the rollout path; on a loaded
  // machine that stalls the emulated motors' replies past their deadline. A warm-up without an
  // interlock takes that cost; its outcome does not matter.
  const clock = new RealtimeClock();
  const rig = await stationRigRegistry().create(
    { type: 'yam-emulated', transport: 'slcan', replyDeadlineMs: 350 },
    { clock },
  );
  try {
    await runRigRollout({
      rig,
      policy: new SwayPolicy(),
      task,
      layout: set.layouts[0],
      episodeSeconds: 0.5,
      controlHz: HZ,
      seed: 0,
      deadlineMs: 1500,
      clock,
    });
  } finally {
    await rig.close?.();
  }
});

after(async () => {
  await plc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Sways the left arm's first joint slowly (well inside its speed limit) around where it starts: a policy whose targets the arm lags. */
class SwayPolicy implements Policy {
  readonly info = {
    name: 'test:sway',
    checkpointSha256: '0'.repeat(64),
    actionHorizon: 5,
    cameras: [],
    needsPrivilegedState: false,
  };
  private start: Float32Array | undefined;
  private hz = HZ;
  async reset(ctx: EpisodeContext): Promise<void> {
    this.start = undefined;
    this.hz = ctx.controlHz;
  }
  async infer(obs: Observation): Promise<ActionChunk> {
    this.start ??= Float32Array.from(obs.state);
    const actions = new Float32Array(5 * STATE_DIM);
    for (let r = 0; r < 5; r++) {
      actions.set(this.start, r * STATE_DIM);
      actions[r * STATE_DIM] += 0.2 * Math.sin(2 * Math.PI * 0.5 * (obs.timeS + (r + 1) / this.hz));
    }
    return { horizon: 5, actions };
  }
}

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 5 });
const task = getTask(set.task);

/**
 * Runs a rollout of the sway policy on the emulated motors with the PLC client as its interlock; at step
 * `cueStep` the test does `cue()` (opens the door, drops the PLC). The recording hook notes, at
 * every step, whether the client's latest value was open then — the same synchronous stretch
 * of the loop as that step's write, so "open at step k's recording" means "open at step k's write".
 */
async function rolloutWithCue(
  cue: () => void | Promise<void>,
  cueStep = 10,
): Promise<{ r: RigRolloutResult; openAt: boolean[]; recorded: SafetyEvent[]; stop: InterlockStop | undefined }> {
  const config = parseCellIoConfig({ ...plc.config(), staleAfterMs: 400 }, 'cell-io.json');
  const client = await CellPlcClient.connect({ config, pkiDir: join(dir, 'pki'), connectTimeoutMs: 20_000 });
  // node-opcua finishes setting up its session for a while after connect(); on a loaded machine
  // that work, in this process, can starve the emulated motors' first replies. Let it finish.
  await new Promise((r) => setTimeout(r, 1500));
  const clock = new RealtimeClock();
  const rig = await stationRigRegistry().create(
    { type: 'yam-emulated', transport: 'slcan', replyDeadlineMs: 350 },
    { clock, table: { task, layout: set.layouts[0] }, interlock: client },
  );
  const openAt: boolean[] = [];
  const recorded: SafetyEvent[] = [];
  let steps = 0;
  let settling = false;
  const recording: EpisodeRecording = {
    jointState: (_s: RigState) => {
      if (settling) return;
      openAt.push(client.current().open);
      if (++steps === cueStep) void cue();
    },
    command: () => {},
    stepTiming: () => {},
    safetyEvent: (e) => recorded.push(e),
    event: (_t, kind, _src, _msg, detail) => {
      if (kind === 'phase' && detail?.phase === 'settle') settling = true;
    },
  };
  try {
    const r = await runRigRollout({
      rig,
      policy: new SwayPolicy(),
      task,
      layout: set.layouts[0],
      episodeSeconds: 2,
      controlHz: HZ,
      seed: 0,
      deadlineMs: 1500,
      clock,
      recording,
    });
    assert.ok(rig instanceof YamCanRig);
    return { r, openAt, recorded, stop: rig.interlockStop };
  } finally {
    await rig.close?.();
    await client.close();
  }
}

/**
 * The first step at whose recording the interlock read open is the episode's last step, and the
 * supervisor's own record puts the stop in that step's cycle (the policy answers at once: one tick per
 * step). A value change (the door) arrives between cycles, so that cycle's write saw it and its
 * applied command is the hold; staleness grows with time, so after a drop the tick may be the one.
 */
function assertStoppedWithinOneCycle(
  r: RigRolloutResult,
  openAt: boolean[],
  stop: InterlockStop | undefined,
  seenBy: 'write' | 'either',
): number {
  const e = r.episode;
  const traj = e.trajectory;
  const last = traj.steps - 1;
  assert.ok(traj.steps < 100, `stopped early (${traj.steps} of 100 steps): ${e.reason ?? e.outcome}`);
  assert.ok(
    openAt.indexOf(true) > 0,
    `the interlock was closed when the rollout started and opened during it (ended at step ${last}): ${e.reason ?? e.outcome}`,
  );
  assert.equal(
    openAt.indexOf(true),
    last,
    `the interlock was first open at step ${openAt.indexOf(true)}; the episode's last step is ${last}`,
  );
  assert.ok(stop, 'the supervisor recorded the stop');
  assert.equal(stop.cycle, last, `the supervisor saw the open interlock in cycle ${stop.cycle}, the step was ${last}`);
  if (seenBy === 'write') assert.equal(stop.seenBy, 'write');
  const o = last * STATE_DIM;
  if (stop.seenBy === 'tick') return last; // that cycle's write came first; its tick sent the hold (test/rig/safety.test.ts)
  // The stop cycle's applied command is the hold at the measured pose, not the policy's target.
  const held = Array.from(traj.applied.subarray(o, o + STATE_DIM));
  // The trajectory keeps each step's state as its tick left it (the rig reuses its state buffers),
  // so the pose the supervisor last measured before this write is the previous step's.
  const measured = Array.from(traj.position.subarray(o - STATE_DIM, o));
  assert.deepEqual(held, measured, 'the stop cycle sends the last measured pose');
  assert.notDeepEqual(
    held,
    Array.from(traj.command.subarray(o, o + STATE_DIM)),
    "the policy's command of that cycle was replaced",
  );
  // Before it, the policy drove the arm (through the supervisor's clamps: late steps on a busy
  // machine may be slowed): the stop cycle is the first that held where the arm was.
  const heldBefore = (k: number): boolean =>
    Array.from(traj.applied.subarray(k * STATE_DIM, (k + 1) * STATE_DIM)).every(
      (v, i) => v === traj.position[(k - 1) * STATE_DIM + i],
    );
  for (let k = 1; k < last; k++) assert.equal(heldBefore(k), false, `step ${k} was not yet a hold`);
  assert.equal(r.finalMode, 'damped');
  return last;
}

test('the cell door opening mid-rollout (YamCanRig on emulated motors) stops the arms in the very cycle the station sees it; the episode is a safety stop with the reason in its events', async () => {
  plc.setInput('doorClosed', true);
  const { r, openAt, recorded, stop } = await rolloutWithCue(() => plc.setInput('doorClosed', false));
  plc.setInput('doorClosed', true);
  const last = assertStoppedWithinOneCycle(r, openAt, stop, 'write');
  const e = r.episode;
  assert.equal(e.outcome, 'safety-stop');
  assert.equal(e.status, 'aborted');
  assert.equal(
    e.reason,
    `The cell door is open. Arms stopped at their pose, then damped; activate the rig again once the interlock is closed. (at step ${last} of 100)`,
  );
  const stops = e.safetyEvents.filter((x) => x.kind === 'interlock-stop');
  assert.equal(stops.length, 1);
  assert.deepEqual(
    recorded.filter((x) => x.kind === 'interlock-stop'),
    stops,
    'the recording hook got the same event',
  );
  assert.equal(e.progress, undefined, 'never scored');
});

test('the PLC dropping mid-rollout holds the arms with the sentence that says so', async () => {
  try {
    const { r, openAt, stop } = await rolloutWithCue(() => plc.drop());
    assertStoppedWithinOneCycle(r, openAt, stop, 'either');
    assert.equal(r.episode.outcome, 'safety-stop');
    assert.match(
      r.episode.reason ?? '',
      /^The cell PLC at opc\.tcp:\/\/127\.0\.0\.1:\d+\S* stopped answering \d+\.\d s ago; the arms are held until it is back\. Arms stopped at their pose, then damped/,
    );
  } finally {
    await plc.restore();
  }
});

test('tandem rig rollout --cell-io: the door opening stops the rollout (exit 1, safety stop), the tower light went green → amber → red', async () => {
  const layouts = join(dir, 'bottles.json');
  writeFileSync(layouts, serializeLayoutSet(set));
  const rigConfig = join(dir, 'rig.json');
  writeFileSync(rigConfig, JSON.stringify({ type: 'yam-cell', replyDeadlineMs: 350 }));
  const cellIo = join(dir, 'cell-io.json');
  writeFileSync(cellIo, JSON.stringify({ ...plc.config(), staleAfterMs: 400 }));
  plc.setInput('doorClosed', true);
  plc.takeTowerChanges();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'rig',
      'rollout',
      '--policy',
      'code:hold',
      '--layouts',
      layouts,
      '--layout',
      '0',
      '--seconds',
      '8',
      '--rig-config',
      rigConfig,
      '--cell-io',
      cellIo,
      '--data',
      join(dir, 'data'),
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number>((res) => child.on('close', (code) => res(code ?? -1)));
  try {
    await until(() => /Running code:hold on yam-cell/.test(stderr) || child.exitCode !== null, 120_000, 20);
    assert.match(stderr, /Running code:hold on yam-cell/, stderr);
    await until(() => plc.towerLight().towerAmber, 20_000, 10);
    // The line and the amber light come just before the rig activates (which an open door
    // refuses, rightly): open the door well inside the 8 s episode, after activation.
    await new Promise((r) => setTimeout(r, 2500));
    plc.setInput('doorClosed', false);
    const code = await exited;
    const out = JSON.parse(stdout);
    assert.equal(code, 1, stderr);
    assert.equal(out.status, 'aborted', stdout);
    assert.equal(out.outcome, 'safety-stop');
    assert.match(
      out.reason,
      /^The cell door is open\. Arms stopped at their pose, then damped; activate the rig again once the interlock is closed\. \(at step \d+ of 400\)$/,
    );
    assert.equal(out.finalMode, 'damped');
    assert.equal(out.safetyEventsByKind['interlock-stop'], 1);
    const lit = plc
      .takeTowerChanges()
      .filter((c) => c.on)
      .map((c) => c.output);
    assert.deepEqual(lit, ['towerGreen', 'towerAmber', 'towerRed']);
    assert.deepEqual(plc.towerLight(), { towerRed: true, towerAmber: false, towerGreen: false });
  } finally {
    child.kill('SIGKILL');
    plc.setInput('doorClosed', true);
  }
});
