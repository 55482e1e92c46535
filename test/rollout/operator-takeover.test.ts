// The operator takes over a policy rollout with the leader arm and gives it back (HG-DAgger-style),
// on virtual time: the emulated YAM follower (real driver, bytes through the in-process serial
// binding), the emulated YAM leader with its teaching handle, the operator's hand pressing the
// handle's top button twice. The rollout loop is the one every rig runs (runRigRollout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STATE_DIM } from '../../src/rig/contract.js';
import { VirtualClock } from '../../src/rig/clocks.js';
import type { ActionChunk, Observation, Policy } from '../../src/policy/contract.js';
import { runRigRollout } from '../../src/rollout/rig-rollout.js';
import type { EpisodeRecording } from '../../src/rollout/run-episode.js';
import { LeaderFollow } from '../../src/teleop/follow.js';
import { LeaderTakeover } from '../../src/teleop/takeover.js';
import { getTask } from '../../src/tasks/registry.js';
import { createEmulatedYamLeader } from '../../drivers/leaders/emulators/yam-leader-emulator.js';
import { trajectoryMotion, type ButtonCue } from '../../drivers/leaders/emulators/operator-hand.js';
import { withActiveEmulatedRig } from '../helpers/emulated-yam.js';

const HZ = 50;
// Longer than the takeover: a chunk in hand at the take-over would still cover the give-back.
const HORIZON = 150;

/** Swings both shoulders ±0.2 rad about the pose it first saw, 2 s a period: where it aims depends on the time it observes. */
class SwingPolicy implements Policy {
  readonly info = {
    name: 'test:swing',
    checkpointSha256: '0'.repeat(64),
    actionHorizon: HORIZON,
    cameras: [],
    needsPrivilegedState: false,
  };
  private base: Float32Array | undefined;
  async reset(): Promise<void> {
    this.base = undefined;
  }
  async infer(obs: Observation): Promise<ActionChunk> {
    this.base ??= Float32Array.from(obs.state);
    const actions = new Float32Array(HORIZON * STATE_DIM);
    for (let r = 0; r < HORIZON; r++) {
      actions.set(this.base, r * STATE_DIM);
      const s = 0.2 * Math.sin(Math.PI * (obs.timeS + r / HZ));
      actions[r * STATE_DIM] += s;
      actions[r * STATE_DIM + 7] -= s;
    }
    return { horizon: HORIZON, actions };
  }
}

interface Recorded {
  readonly kind: string;
  readonly message: string;
  readonly detail?: Record<string, unknown>;
}

function eventsRecording(into: Recorded[]): EpisodeRecording {
  return {
    jointState: () => {},
    command: () => {},
    safetyEvent: () => {},
    stepTiming: () => {},
    event: (_t, kind, _source, message, detail) => void into.push({ kind, message, detail }),
  };
}

/** One 5 s rollout of the swing policy; the hand holds `offset` from the follower's start pose and presses the top button at `cues`. */
async function rolloutWithHand(offset: number, cues: readonly number[]) {
  const clock = new VirtualClock();
  let out: (Pick<Awaited<ReturnType<typeof runRigRollout>>, 'episode' | 'chunks'> & { events: Recorded[] }) | undefined;
  await withActiveEmulatedRig({ clock }, async ({ rig }) => {
    const start = Array.from(rig.read().position);
    start[0] += offset;
    const buttons: ButtonCue[] = cues.map((t) => ({ t, arm: 'left', button: 0, holdS: 0.1 }));
    const emu = createEmulatedYamLeader({ clock, hand: trajectoryMotion([{ t: 0, q: start }], buttons) });
    try {
      await emu.leader.configure();
      await emu.leader.activate();
      emu.startHand();
      const policy = new SwingPolicy();
      const events: Recorded[] = [];
      const task = getTask('bottles-in-the-bin');
      const { episode, chunks } = await runRigRollout({
        rig,
        policy,
        task,
        layout: { index: 0, tier: 1, objects: [], fixtures: [] },
        episodeSeconds: 5,
        controlHz: HZ,
        seed: 1,
        clock,
        recording: eventsRecording(events),
        takeover: new LeaderTakeover(new LeaderFollow({ leader: emu.leader, rampS: 0.5 })),
      });
      out = { episode, chunks, events };
    } finally {
      await emu.leader.close();
      for (const d of Object.values(emu.devices)) d?.adapter.dispose();
    }
  });
  return out!;
}

test('the operator takes over a policy rollout with the leader and gives it back: the policy pauses, the span is recorded, and control never jumps either way', {
  timeout: 120_000,
}, async () => {
  const { episode, chunks, events } = await rolloutWithHand(0, [1, 2.5]);
  assert.equal(episode.outcome, 'completed', episode.reason);
  assert.equal(episode.takeovers.length, 1, JSON.stringify(episode.takeovers));
  const [span] = episode.takeovers;
  assert.equal(span.open, false);
  // The presses are seen within a couple of steps of the hand's cues (the episode starts after the hand does).
  assert.ok(span.startS > 0.5 && span.startS < 1.1, `took over at ${span.startS} s`);
  // Given back at the swing's crest: the policy's fresh command is 0.2 rad from the operator's pose.
  assert.ok(span.endS > 2 && span.endS < 2.6, `gave back at ${span.endS} s`);
  const t = episode.trajectory;
  const first = Math.round(span.startS * HZ);
  const last = first + span.steps;
  for (let i = 0; i < t.steps; i++)
    assert.equal(t.chunkIndex[i] < 0, i >= first && i < last, `step ${i}: chunk ${t.chunkIndex[i]}`);
  // The policy paused: it observed nothing while the operator drove, and observed afresh at the give-back.
  const observedSteps = chunks.map((c) => c.observedStep);
  assert.deepEqual(
    observedSteps.filter((s) => s >= first && s < last),
    [],
    `observed at steps ${observedSteps.join(', ')}`,
  );
  assert.ok(observedSteps.includes(last), `observed at steps ${observedSteps.join(', ')}`);
  // The operator's pose (the hand holds the start pose) is where the follower was led.
  const o = (last - 1) * STATE_DIM;
  assert.ok(
    Math.abs(t.command[o]) < 0.01 && Math.abs(t.command[o + 7]) < 0.01,
    `the operator's last command ${t.command[o]}, ${t.command[o + 7]}`,
  );
  // No jump: the applied command moves no more per step at the two handovers than the policy's own swing does.
  let worst = { d: 0, step: 0 };
  for (let i = 1; i < t.steps; i++) {
    for (let k = 0; k < STATE_DIM; k++) {
      const d = Math.abs(t.applied[i * STATE_DIM + k] - t.applied[(i - 1) * STATE_DIM + k]);
      if (d > worst.d) worst = { d, step: i };
    }
  }
  assert.ok(
    worst.d < 0.02,
    `the command jumped ${worst.d.toFixed(3)} rad at step ${worst.step} (handovers at ${first} and ${last})`,
  );
  const takeover = events.filter((e) => e.kind === 'takeover');
  assert.deepEqual(
    takeover
      .filter((e) => e.detail?.takeover === 'start' || e.detail?.takeover === 'end')
      .map((e) => [e.detail?.takeover, e.detail?.step]),
    [
      ['start', first],
      ['end', last],
    ],
  );
  assert.ok(
    takeover.some((e) => e.detail?.takeover === 'sync-engaging'),
    'the engage ramp is recorded',
  );
});

test('a takeover while the leader is far from the follower is refused with the teleop sentence, and the policy drives on', {
  timeout: 120_000,
}, async () => {
  const { episode, events } = await rolloutWithHand(0.8, [1]);
  assert.equal(episode.outcome, 'completed', episode.reason);
  assert.deepEqual(episode.takeovers, []);
  assert.ok(Array.from(episode.trajectory.chunkIndex.subarray(0, episode.trajectory.steps)).every((c) => c >= 0));
  const refused = events.filter((e) => e.kind === 'takeover' && e.detail?.takeover === 'sync-refused');
  assert.equal(refused.length, 1);
  assert.match(
    refused[0].message,
    /^Not engaging: the leader's left joint 1 is 0\.\d\d rad from the follower's \(more than 0\.60 rad\); move the leader to the follower's pose, then engage again\.$/,
  );
});
