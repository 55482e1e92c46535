/**
 * The follower (YamCanRig on the emulated cell, real SLCAN bytes) tracking an emulated YAM leader
 * through the 250 Hz control loop and its safety supervisor.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { ControlLoop } from '../../src/rig/control-loop.js';
import { getTask } from '../../src/tasks/registry.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { createEmulatedCell } from '../../src/emulated-cell/emulated-cell.js';
import { createEmulatedYamLeader } from '../../drivers/leaders/emulators/yam-leader-emulator.js';
import { scriptedMotion, trajectoryMotion, LEADER_REST_POSE } from '../../drivers/leaders/emulators/operator-hand.js';
import { LeaderFollow, type FollowEvent } from '../../src/teleop/follow.js';
import type { HandMotion } from '../../drivers/leaders/emulators/operator-hand.js';

async function rigAndLeader(hand: HandMotion) {
  const clock = new RealtimeClock();
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 0 });
  const cell = await createEmulatedCell({
    task: getTask('bottles-in-the-bin'),
    layout: set.layouts[0],
    gap: { kind: 'none' },
    clock,
    replyDeadlineMs: 350,
  });
  const emu = createEmulatedYamLeader({ clock, hand });
  await cell.rig.configure();
  await cell.rig.activate();
  await emu.leader.configure();
  await emu.leader.activate();
  return { clock, cell, emu };
}

function run(
  follow: LeaderFollow,
  rig: ConstructorParameters<typeof ControlLoop>[0]['rig'],
  clock: RealtimeClock,
  seconds: number,
) {
  const loop = new ControlLoop({ rig, clock, rateHz: 250, source: follow.source });
  return loop.run({ untilS: clock.nowS() + seconds });
}

test('engaging ramps the follower to the moving leader without a jump, then it tracks; the leader going silent leaves it holding', async () => {
  // The leader starts 0.4 rad from the follower on the left shoulder: engaging must ramp that, not jump it.
  const rest = [...LEADER_REST_POSE];
  rest[0] = 0.4;
  const { clock, cell, emu } = await rigAndLeader(scriptedMotion({ rest, stillS: 0.5, amplitude: 0.6 }));
  try {
    const follow = new LeaderFollow({ leader: emu.leader, rampS: 1, autoReengageS: 0.3 });
    const events: FollowEvent[] = [];
    emu.startHand();
    follow.engage();
    // During the ramp the command stays on the minimum-jerk curve from where the follower was
    // (in clock time, so a stall of this busy machine does not matter): never the 0.4 rad jump.
    let t0 = NaN;
    let from = NaN;
    let worst = -Infinity;
    const errors: number[] = [];
    const mj = (u: number) => (u >= 1 ? 1 : u * u * u * (10 - 15 * u + 6 * u * u));
    const source = follow.source;
    const loop = new ControlLoop({
      rig: cell.rig,
      clock,
      rateHz: 250,
      source: (s, c, t) => {
        const before = follow.state;
        const cmd = source(s, c, t)!;
        if (before === 'released' && follow.state === 'engaging') {
          t0 = t;
          from = s.position[0];
        }
        if (follow.state === 'engaging') worst = Math.max(worst, cmd.position[0] - from - 0.45 * mj((t - t0) / 1));
        if (follow.state === 'synced') errors.push(follow.trackingErrorRad);
        return cmd;
      },
    });
    await loop.run({ untilS: clock.nowS() + 3 });
    events.push(...follow.takeEvents());
    assert.deepEqual(
      events.map((e) => e.kind),
      ['sync-engaging', 'sync-engaged'],
      events.map((e) => e.message).join(' | '),
    );
    assert.equal(follow.state, 'synced');
    // The leader starts moving 0.5 s into the 1 s ramp, so the curve's end moves too: 0.06 rad of
    // slack for that, against the 0.4 rad a jump would show.
    assert.ok(Number.isFinite(t0) && worst < 0.06, `the ramp left its curve by ${worst.toFixed(3)} rad`);
    // Tracking: the median over the synced cycles of the largest joint error (follower measured vs
    // the leader's sample) is small — the median, because this shared machine stalls now and then.
    // It is 0.079–0.080 rad here, idle or loaded (the follower's lag behind a moving leader); a
    // follower that did not track would be off by the leader's 0.45 rad.
    errors.sort((a, b) => a - b);
    assert.ok(errors.length > 100, `${errors.length} synced cycles`);
    assert.ok(errors[errors.length >> 1] < 0.1, `median tracking error ${errors[errors.length >> 1].toFixed(3)} rad`);
    // The leader goes silent: the follower holds where it was (it keeps being commanded, so no watchdog damp).
    emu.inject({ kind: 'silence' });
    await run(follow, cell.rig, clock, 0.6);
    const lost = follow.takeEvents();
    assert.equal(lost[0]?.kind, 'leader-lost');
    assert.match(lost[0].message, /stopped answering .* the follower holds/);
    const held = Float64Array.from(cell.rig.read().position);
    await run(follow, cell.rig, clock, 0.5);
    const after = cell.rig.read();
    assert.equal(after.mode, 'active');
    for (const k of [0, 1, 2, 3])
      assert.ok(
        Math.abs(after.position[k] - held[k]) < 0.03,
        `joint ${k} drifted ${after.position[k] - held[k]} rad while holding`,
      );
    // Back after longer than autoReengageS: engaging again is the operator's call.
    emu.inject({ kind: 'recover' });
    await run(follow, cell.rig, clock, 0.4);
    const back = follow.takeEvents();
    assert.equal(
      back[0]?.kind,
      'leader-back',
      JSON.stringify(back) +
        JSON.stringify(emu.leader.latest().problem) +
        (clock.nowS() - emu.leader.latest().sampleS[0]),
    );
    assert.equal(follow.state, 'lost');
  } finally {
    await emu.leader.close();
    await cell.rig.deactivate();
    await cell.close();
  }
});

test('a leader far from the follower is refused at engage with one sentence, and the follower does not move', async () => {
  const far = [...LEADER_REST_POSE];
  far[1] = 1.4; // left joint 2 well above the follower's rest
  const { clock, cell, emu } = await rigAndLeader(trajectoryMotion([{ t: 0, q: far }]));
  try {
    const follow = new LeaderFollow({ leader: emu.leader });
    const before = Float64Array.from(cell.rig.read().position);
    follow.engage();
    await run(follow, cell.rig, clock, 0.5);
    const [e] = follow.takeEvents();
    assert.equal(e.kind, 'sync-refused');
    assert.match(
      e.message,
      /^Not engaging: the leader's left joint 2 is 1\.\d\d rad from the follower's \(more than 0\.60 rad\); move the leader to the follower's pose, then engage again\.$/,
    );
    assert.equal(follow.state, 'released');
    const after = cell.rig.read().position;
    assert.ok(Math.abs(after[1] - before[1]) < 0.03);
  } finally {
    await emu.leader.close();
    await cell.rig.deactivate();
    await cell.close();
  }
});
