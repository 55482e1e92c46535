import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../../src/rig/yam.js';
import { STATE_DIM, stateIndex, type ArmSide } from '../../../src/rig/contract.js';
import type { Observation, PrivilegedState } from '../../../src/policy/contract.js';
import { BottlesPolicy } from '../../../src/policy/code/index.js';
import { armReach } from '../../../src/policy/code/arm-reach.js';
import { binShape, bottleInBin, viewBin, viewBottle, bottleShape } from '../../../src/policy/code/geometry.js';
import { sweptAtPose, sweptDistance } from '../../../src/policy/code/arm-separation.js';
import type { Vec3 } from '../../../src/policy/code/frames.js';

// The policy against a stand-in rig (no physics, ≈ 1 CPU-s): the arms reach every target; a
// bottle whose axis is within 5 cm of a hand that closes rides with that hand (reading 0.3 open, as fingers
// on a bottle do) until it opens, then lands upright below it — in the bin when over it. The
// bin stands where both arms drop into it; one bottle on each arm's side.
const rigModel = yamRigModel();
const controlHz = 50;
const ctx = { seed: 1, prompt: 'put all the bottles in the bin', rigModel, controlHz };
const reaches = rigModel.arms.map((a) => armReach(a));
const reachOf = (side: ArmSide) => reaches.find((r) => r.side === side)!;
const BIN_AT: Vec3 = [0.05, 0, 0];
const bin = viewBin({ id: 'bin', kind: 'bin', position: BIN_AT, quaternion: [0, 0, 0, 1] }, binShape('bin')!);
const shape = bottleShape('bottle-500ml')!;
const SIDES = ['left', 'right'] as const;

interface Bottle { id: string; base: Vec3; heldBy?: ArmSide; offset?: Vec3 }

async function run(seconds: number) {
  const policy = new BottlesPolicy();
  await policy.reset(ctx);
  const bottles: Bottle[] = [
    { id: 'bottle-1', base: [-0.2, 0.27, 0] },
    { id: 'bottle-2', base: [-0.2, -0.27, 0] },
  ];
  let state = new Float32Array(STATE_DIM);
  state[6] = state[13] = 1;
  let bothMoving = 0;
  let closest = Infinity;
  let handsOverBinAtOnce = 0;
  const hand = (row: Float32Array, side: ArmSide) => reachOf(side).toolAt(row.subarray(stateIndex(side, 0), stateIndex(side, 0) + 6)).position;
  const privileged = (): PrivilegedState => ({
    objects: bottles.map((b) => ({ id: b.id, kind: 'bottle-500ml', position: b.base, quaternion: [0, 0, 0, 1] })),
    fixtures: [{ id: 'bin', kind: 'bin', position: BIN_AT, quaternion: [0, 0, 0, 1] }],
  });
  for (let i = 0; i < (seconds * controlHz) / 10; i++) {
    const obs: Observation = { timeS: i / 5, state, images: {}, prompt: ctx.prompt, privileged: privileged() };
    const chunk = await policy.infer(obs);
    const H = chunk.horizon;
    const first = chunk.actions.subarray(0, STATE_DIM);
    const last = chunk.actions.subarray((H - 1) * STATE_DIM, H * STATE_DIM);
    const moved = (side: ArmSide) => { let m = 0; for (let j = 0; j < 6; j++) m = Math.max(m, Math.abs(last[stateIndex(side, j)] - state[stateIndex(side, j)])); return m > 0.01; };
    if (moved('left') && moved('right')) bothMoving += 1;
    for (let r = 0; r < H; r++) {
      const row = chunk.actions.subarray(r * STATE_DIM, (r + 1) * STATE_DIM);
      const d = sweptDistance(sweptAtPose(reachOf('left'), row.subarray(0, 6)), sweptAtPose(reachOf('right'), row.subarray(7, 13)));
      closest = Math.min(closest, d);
      const over = SIDES.filter((s) => { const p = hand(row, s); return Math.abs(p[0] - BIN_AT[0]) < 0.15 && Math.abs(p[1] - BIN_AT[1]) < 0.11 && p[2] < 0.35; });
      if (over.length === 2) handsOverBinAtOnce += 1;
    }
    // The stand-in rig: the arms are where the chunk ends; bottles follow closed hands.
    state = Float32Array.from(last);
    for (const side of SIDES) {
      const g = last[stateIndex(side, 6)];
      const p = hand(last, side);
      const held = bottles.find((b) => b.heldBy === side);
      if (held && g > 0.5) {
        held.heldBy = undefined;
        held.base = [p[0] + held.offset![0], p[1] + held.offset![1], 0];
      } else if (held) {
        held.base = [p[0] + held.offset![0], p[1] + held.offset![1], p[2] + held.offset![2]];
        state[stateIndex(side, 6)] = 0.3;
      } else if (g < 0.5 && first[stateIndex(side, 6)] > 0.5) {
        const near = bottles.find((b) => !b.heldBy && Math.hypot(b.base[0] - p[0], b.base[1] - p[1]) < 0.05 && p[2] >= b.base[2] && p[2] <= b.base[2] + shape.heightM);
        if (near) {
          near.heldBy = side;
          near.offset = [near.base[0] - p[0], near.base[1] - p[1], near.base[2] - p[2]];
          state[stateIndex(side, 6)] = 0.3;
        }
      }
    }
  }
  const inBin = bottles.filter((b) => !b.heldBy && bottleInBin(bin, viewBottle({ id: b.id, kind: 'bottle-500ml', position: b.base, quaternion: [0, 0, 0, 1] }, shape))).length;
  return { policy, bothMoving, closest, handsOverBinAtOnce, inBin };
}

test('with the bin in reach of both, the two arms pick at once on their own sides, share the bin by turns and stay apart', async () => {
  const r = await run(30);
  const log = r.policy.log.join('\n');
  const picks = r.policy.log.filter((l) => /pick bottle-\d with the/.test(l));
  assert.ok(picks.some((l) => /bottle-1 with the left arm/.test(l)) && picks.some((l) => /bottle-2 with the right arm/.test(l)), log);
  // Both picks start before either bottle is in the bin: the arms work at once.
  const startS = picks.map((l) => Number.parseFloat(l));
  assert.ok(Math.max(...startS) < 5, log);
  assert.ok(r.bothMoving >= 10, `both arms moved in the same chunk ${r.bothMoving} times\n${log}`);
  assert.equal(r.handsOverBinAtOnce, 0, 'never both hands over the bin at once');
  assert.ok(r.closest >= 0.1, `the arms' skeletons came within ${(r.closest * 100).toFixed(1)} cm`);
  assert.equal(r.inBin, 2, log);
});
