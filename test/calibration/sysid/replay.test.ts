import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readEpisodeTrajectory, SysidEpisodeError } from '../../../calibration/sysid/episode-trajectory.js';
import { ARM_JOINT_INDICES, replayEpisode } from '../../../calibration/sysid/replay.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash, withCalibration } from '../../../src/sim/calibration.js';
import { recordSimTake } from './sim-take.js';

const model = yamRigModel();
/** The "robot": heavier at the hand (the gripper rotor), weaker shoulder and elbow motors. */
const ROBOT = {
  ...DEFAULT_SIM_CALIBRATION,
  name: 'robot',
  fingerReflectedMassKg: 0.6,
  motorTorqueScale: [1, 0.93, 0.96, 1, 1, 1],
};
let dir: string;
let take: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-sysid-replay-'));
  take = join(dir, 'take.mcap');
  await recordSimTake({ file: take, calibration: ROBOT, seconds: 4, seed: 1 });
});
after(() => rmSync(dir, { recursive: true, force: true }));

const armRms = (rms: readonly number[]): number =>
  Math.sqrt(ARM_JOINT_INDICES.reduce((s, j) => s + rms[j] ** 2, 0) / ARM_JOINT_INDICES.length);

test('replaying a take on the physics that recorded it reproduces the measured joints; other physics do not', async () => {
  const traj = await readEpisodeTrajectory(take, model);
  assert.equal(traj.exclusion, undefined);
  const same = await replayEpisode(traj, model, ROBOT);
  const other = await replayEpisode(traj, model, DEFAULT_SIM_CALIBRATION);
  assert.equal(same.problem, undefined);
  assert.ok(armRms(same.rmsRad) < 1e-4, `same physics: ${armRms(same.rmsRad)} rad`);
  assert.ok(armRms(other.rmsRad) > 2e-3, `default physics: ${armRms(other.rmsRad)} rad`);
  // The compared samples start after the burn-in and are all free motion (the excitation stays off the table).
  assert.ok(same.timesS[0] >= 0.5);
  assert.equal(same.byPhase.contact.samples, 0);
  // The excitation shuts the empty grippers: closing onto nothing is free motion, not holding.
  assert.ok(
    same.byPhase.holding.samples < 0.02 * same.timesS.length,
    `holding ${same.byPhase.holding.samples} of ${same.timesS.length}`,
  );
});

test("the default record's id does not change: fitted-only fields are absent from it", () => {
  // What stored rollouts carry as their sim calibration: adding optional fields must not move it.
  assert.equal(
    simCalibrationHash(withCalibration(DEFAULT_SIM_CALIBRATION, {})),
    simCalibrationHash(DEFAULT_SIM_CALIBRATION),
  );
  assert.equal(JSON.stringify(DEFAULT_SIM_CALIBRATION).includes('motorTorqueScale'), false);
});

test('motor torque scale and command latency change the motion the way a weaker, later motor does', async () => {
  const traj = await readEpisodeTrajectory(take, model);
  const base = { ...ROBOT };
  const weak = await replayEpisode(traj, model, { ...base, motorTorqueScale: [1, 0.8, 0.96, 1, 1, 1] });
  const late = await replayEpisode(traj, model, { ...base, commandLatencyS: 0.01 });
  // Joint 2 (index 1) carries the arm: 20 % less torque sags it by far more than the floor.
  assert.ok(weak.rmsRad[1] > 5e-3, `weak shoulder: ${weak.rmsRad[1]}`);
  // A 10 ms later command makes every moving joint lag: error on all arm joints.
  assert.ok(
    ARM_JOINT_INDICES.every((j) => late.rmsRad[j] > 2e-4),
    `late: ${late.rmsRad.map((x) => x.toFixed(5))}`,
  );
  // Smooth in the latency: half the latency, less error (what a fit needs).
  const half = await replayEpisode(traj, model, { ...base, commandLatencyS: 0.002 });
  assert.ok(armRms(half.rmsRad) < armRms(late.rmsRad) && armRms(half.rmsRad) > 1e-5);
});

test('episodes the fit must not learn from are left out with the reason; a cut-off file is refused naming record recover', async () => {
  const cases: [string, Parameters<typeof recordSimTake>[0], RegExp][] = [
    [
      'other-model.mcap',
      { file: '', calibration: ROBOT, seconds: 1, seed: 2, metadata: { rig_model: 'aloha' } },
      /recorded on rig model 'aloha', not 'yam-bimanual'/,
    ],
    [
      'cell-default.mcap',
      { file: '', calibration: ROBOT, seconds: 1, seed: 2, metadata: { table: 'cell-default' } },
      /the emulated cell's default layout on the table, which the file does not name.*--layouts FILE --layout I/,
    ],
    [
      'gap.mcap',
      { file: '', calibration: ROBOT, seconds: 1.5, seed: 2, gap: { atS: 0.6, forS: 0.3 } },
      /gap in its joint states at 0\.\d+ s \(longer than the 100 ms command watchdog\)/,
    ],
    [
      'held.mcap',
      {
        file: '',
        calibration: ROBOT,
        seconds: 1,
        seed: 2,
        safety: [{ timeS: 0.5, kind: 'watchdog-hold', message: 'no command for 100 ms' }],
      },
      /1 safety intervention that took the arm from its commands \(watchdog-hold/,
    ],
  ];
  for (const [name, spec, why] of cases) {
    const file = join(dir, name);
    await recordSimTake({ ...spec, file });
    const t = await readEpisodeTrajectory(file, model);
    assert.match(t.exclusion ?? '', why, name);
  }
  // Watchdog holds only (a policy's first plan outlasting the watchdog): replayed from the first
  // command after the last one, when enough of the take follows; its physics still reproduce.
  const resumed = join(dir, 'resumed.mcap');
  await recordSimTake({
    file: resumed,
    calibration: ROBOT,
    seconds: 6,
    seed: 2,
    safety: [{ timeS: 0.3, kind: 'watchdog-hold', message: 'no command for 100 ms' }],
  });
  const rt = await readEpisodeTrajectory(resumed, model);
  assert.equal(rt.exclusion, undefined);
  assert.ok(
    rt.replayFromS !== undefined && rt.replayFromS > 0.3 && rt.replayFromS < 0.35,
    `replayed from ${rt.replayFromS}`,
  );
  const rr = await replayEpisode(rt, model, ROBOT);
  assert.ok(rr.timesS[0] >= rt.replayFromS + 0.5, `first compared sample ${rr.timesS[0]}`);
  assert.ok(armRms(rr.rmsRad) < 1e-4, `resumed replay ${armRms(rr.rmsRad)} rad`);
  // A clamp is recorded as applied: the episode stays usable.
  const clamped = join(dir, 'clamped.mcap');
  await recordSimTake({
    file: clamped,
    calibration: ROBOT,
    seconds: 1,
    seed: 2,
    safety: [{ timeS: 0.5, kind: 'velocity-clamped', message: 'clamped' }],
  });
  assert.equal((await readEpisodeTrajectory(clamped, model)).exclusion, undefined);
  const bytes = readFileSync(take);
  const cut = join(dir, 'cut.mcap');
  writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
  await assert.rejects(
    readEpisodeTrajectory(cut, model),
    (e: unknown) => e instanceof SysidEpisodeError && /is cut off .*tandem record recover/.test(e.message),
  );
});
