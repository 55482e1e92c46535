/**
 * The per-inference deadline on a clock that stands still while the policy thinks (the
 * virtual-time cell): no arm waits on the policy there, so a slow answer — a busy machine, a big
 * model on a small CPU — must not end the rollout; only a given `--timeout-ms` (or a hung policy,
 * past the long default) does. On the wall clock the 1.5 s default stays: the arm is holding.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RealtimeClock, VirtualClock } from '../../src/rig/clocks.js';
import { createEmulatedCell } from '../../src/emulated-cell/emulated-cell.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { HoldPolicy } from '../../src/rollout/hold-policy.js';
import {
  DEFAULT_DEADLINE_MS,
  policyDeadlineMs,
  runRigRollout,
  STANDSTILL_DEADLINE_MS,
} from '../../src/rollout/rig-rollout.js';
import type { ActionChunk, Observation } from '../../src/policy/contract.js';

const task = getTask('bottles-in-the-bin');
const layout = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3 }).layouts[0];

/** Holds the arms, answering each chunk after `wallMs` of wall time (as on a machine too busy to answer sooner). */
class SlowHoldPolicy extends HoldPolicy {
  constructor(private readonly wallMs: number) {
    super();
  }
  override async infer(obs: Observation): Promise<ActionChunk> {
    await sleep(this.wallMs);
    return super.infer(obs);
  }
}

async function rollout(deadlineMs: number | undefined) {
  const clock = new VirtualClock();
  const cell = await createEmulatedCell({ task, layout, gap: { kind: 'none' }, clock });
  try {
    await cell.rig.configure();
    await cell.rig.activate();
    return await runRigRollout({
      rig: cell.rig,
      policy: new SlowHoldPolicy(DEFAULT_DEADLINE_MS + 300),
      task,
      layout,
      episodeSeconds: 0.3,
      controlHz: 50,
      seed: 0,
      clock,
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
  } finally {
    await cell.close();
  }
}

test('the default deadline follows the clock: 1.5 s while an arm holds on the wall clock, long where time stands still for the policy', () => {
  assert.equal(policyDeadlineMs(undefined), DEFAULT_DEADLINE_MS);
  assert.equal(policyDeadlineMs(new RealtimeClock()), DEFAULT_DEADLINE_MS);
  assert.equal(policyDeadlineMs(new VirtualClock()), STANDSTILL_DEADLINE_MS);
  assert.equal(policyDeadlineMs(new VirtualClock(), 800), 800, 'a given --timeout-ms is kept');
});

test('on the virtual-time cell a policy slower than the wall-clock deadline still runs its episode to the end; a given deadline still ends it', async () => {
  const slow = await rollout(undefined);
  assert.equal(slow.episode.status, 'valid', slow.episode.reason);
  assert.equal(slow.episode.outcome, 'completed');
  assert.equal(slow.episode.trajectory.steps, 15, '0.3 s at 50 Hz');
  const given = await rollout(1000);
  assert.equal(given.episode.outcome, 'policy-unavailable');
  assert.match(given.episode.reason ?? '', /did not answer within 1000 ms/);
});
