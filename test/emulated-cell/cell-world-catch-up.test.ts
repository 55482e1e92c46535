/**
 * The cell's world catching up with the wall clock after it fell behind, on a clock the test moves:
 * it may make up a stall of its own thread at once (the host waited as long for the replies), but a
 * world that fell behind while running never moves its motors faster than 1.5× the wall clock
 * between two calls — else a real driver reads a closing gripper as a broken encoder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CellWorld } from '../../src/emulated-cell/cell-world.js';
import { cellTruth } from '../../src/emulated-cell/cell-truth.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { yamRigModel } from '../../src/rig/yam.js';

test('after a stall the world makes up at most 1.5× the wall time between two calls, then keeps up again', async () => {
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3 });
  let nowS = 100;
  const world = await CellWorld.create({
    rigModel: yamRigModel(),
    task: getTask(set.task),
    layout: set.layouts[0],
    truth: cellTruth({ kind: 'none' }),
    placementSeed: 0,
    nowS: () => nowS,
    // Nothing steps it in the background: the test's calls are the only ones.
    timePassesByItself: true,
  });
  try {
    const dtS = world.scene.opts.calibration.physicsStepS;
    world.advanceTo(nowS); // first contact: the wall clock starts
    const stepsAt = (): number => world.scene.steps;
    const start = stepsAt();
    // The world's thread gets no CPU for 0.3 s.
    nowS += 0.3;
    world.advanceTo(nowS);
    const afterStall = stepsAt() - start;
    assert.ok(afterStall > 0 && afterStall * dtS <= 0.3, `made up ${afterStall} steps of a 0.3 s stall in one call`);
    // Then calls every 4 ms: each may add at most 1.5 × 4 ms of world time (plus the step in hand).
    let worst = 0;
    for (let k = 0; k < 200; k++) {
      const before = stepsAt();
      nowS += 0.004;
      world.advanceTo(nowS);
      worst = Math.max(worst, (stepsAt() - before) * dtS);
    }
    assert.ok(worst <= 1.5 * 0.004 + dtS + 1e-9, `the world ran ${(worst * 1000).toFixed(1)} ms in 4 ms of wall time`);
    const lagS = nowS - 100 - (stepsAt() - start) * dtS;
    assert.ok(lagS < dtS * 1.01, `caught up again: ${(lagS * 1000).toFixed(1)} ms behind after 0.8 s`);
  } finally {
    world.free();
  }
});
