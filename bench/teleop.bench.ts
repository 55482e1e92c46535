/**
 * Teleoperation on the emulated cell with the emulated YAM leader (real SLCAN bytes both sides,
 * one process), at 250 Hz:
 *   - leader-to-follower latency: the age of the leader sample each command carries, p50 / p99,
 *     against the control period;
 *   - tracking error while moving: follower measured vs the operator's hand, beside the same-run
 *     baseline of the follower commanded the hand's pose directly (no leader in the path) — the
 *     ratio is what the leader path costs;
 *   - episodes per operator hour with the reset period: a short session (engage, takes, resets,
 *     file open/close) against the ideal of takes + resets only.
 *
 *   npm run bench -- teleop      (TELEOP_BENCH_SECONDS=6 per run by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RealtimeClock } from '../src/rig/clocks.js';
import { ControlLoop } from '../src/rig/control-loop.js';
import { STATE_DIM, type RigState } from '../src/rig/contract.js';
import { getTask } from '../src/tasks/registry.js';
import { sampleLayoutSet } from '../src/layouts/layout-set.js';
import { createEmulatedCell } from '../src/emulated-cell/emulated-cell.js';
import { createEmulatedYamLeader } from '../drivers/leaders/emulators/yam-leader-emulator.js';
import { scriptedMotion } from '../drivers/leaders/emulators/operator-hand.js';
import { LeaderFollow } from '../src/teleop/follow.js';
import { OperatorControls } from '../src/teleop/operator-controls.js';
import { runTeleopSession } from '../src/teleop/teleop-session.js';
import { openStore } from '../src/store/store.js';
import { openStationRecording } from '../src/app/episode-recording.js';

const SECONDS = Number(process.env.TELEOP_BENCH_SECONDS ?? 6);
const JOINTS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12];

function pct(a: number[], p: number): number {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))] : NaN;
}

async function setup() {
  const clock = new RealtimeClock();
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 0 });
  const cell = await createEmulatedCell({
    task: getTask('bottles-in-the-bin'),
    layout: set.layouts[0],
    gap: { kind: 'none' },
    clock,
    replyDeadlineMs: 350,
  });
  const hand = scriptedMotion();
  const emu = createEmulatedYamLeader({ clock, hand });
  await cell.rig.configure();
  await cell.rig.activate();
  await emu.leader.configure();
  await emu.leader.activate();
  emu.startHand();
  return { clock, cell, emu, hand };
}

/** RMS over joints and cycles of follower measured − hand, once the motion is under way (after 1.5 s). */
function errorMeter(hand: ReturnType<typeof scriptedMotion>, t0: number) {
  const q = new Float64Array(STATE_DIM);
  const v = new Float64Array(STATE_DIM);
  let sum = 0;
  let n = 0;
  return {
    add(state: RigState, nowS: number) {
      if (nowS - t0 < 1.5) return;
      hand.pose(nowS - t0, q, v);
      for (const k of JOINTS) {
        const e = state.position[k] - q[k];
        sum += e * e;
        n++;
      }
    },
    rmsRad: () => Math.sqrt(sum / Math.max(1, n)),
  };
}

async function direct() {
  const { clock, cell, emu, hand } = await setup();
  const t0 = clock.nowS();
  const meter = errorMeter(hand, t0);
  const q = new Float64Array(STATE_DIM);
  const v = new Float64Array(STATE_DIM);
  const cmd = { position: q };
  const loop = new ControlLoop({
    rig: cell.rig,
    clock,
    rateHz: 250,
    source: (s, _c, t) => {
      meter.add(s, t);
      hand.pose(t - t0, q, v);
      return cmd;
    },
  });
  const stats = await loop.run({ untilS: t0 + SECONDS });
  await emu.leader.close();
  await cell.rig.deactivate();
  await cell.close();
  return { rms: meter.rmsRad(), hz: stats.achievedHz };
}

async function teleop() {
  const { clock, cell, emu, hand } = await setup();
  const t0 = clock.nowS();
  const meter = errorMeter(hand, t0);
  const follow = new LeaderFollow({ leader: emu.leader, rampS: 1 });
  follow.engage();
  const loop = new ControlLoop({
    rig: cell.rig,
    clock,
    rateHz: 250,
    source: (s, c, t) => {
      const cmd = follow.source(s, c, t);
      if (follow.state === 'synced') meter.add(s, t);
      return cmd;
    },
  });
  const stats = await loop.run({ untilS: t0 + SECONDS });
  const ages = Array.from(follow.sampleAgeS.subarray(0, Math.min(follow.ages, follow.sampleAgeS.length))).map(
    (a) => a * 1000,
  );
  await emu.leader.close();
  await cell.rig.deactivate();
  await cell.close();
  return {
    rms: meter.rmsRad(),
    hz: stats.achievedHz,
    p50: pct(ages, 0.5),
    p99: pct(ages, 0.99),
    lost: follow.takeEvents().filter((e) => e.kind === 'leader-lost').length,
  };
}

async function session(episodes: number, episodeSeconds: number, resetSeconds: number) {
  const { clock, cell, emu } = await setup();
  const dir = mkdtempSync(join(tmpdir(), 'teleop-bench-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  try {
    const r = await runTeleopSession({
      rig: cell.rig,
      clock,
      follow: new LeaderFollow({ leader: emu.leader }),
      controls: new OperatorControls(),
      episodes,
      episodeSeconds,
      resetSeconds,
      prompt: 'bench',
      log: () => {},
      openTake: async (i) => {
        const rec = await openStationRecording({
          store,
          dir,
          kind: 'teleop',
          fileName: `ep${i}.mcap`,
          rigModel: cell.rig.model,
          clock,
          metadata: { kind: 'teleop' },
        });
        return {
          recorder: rec.recorder,
          file: rec.file,
          finish: () => rec.finish(undefined, {}),
          discard: async () => rec.file,
        };
      },
    });
    return r;
  } finally {
    await emu.leader.close();
    await cell.rig.deactivate();
    await cell.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const d = await direct();
const t = await teleop();
console.log(
  `leader-to-follower latency (age of the leader sample each 250 Hz command carries): p50 ${t.p50.toFixed(2)} ms, p99 ${t.p99.toFixed(2)} ms — ${(t.p50 / 4).toFixed(2)}× / ${(t.p99 / 4).toFixed(2)}× the 4 ms control period; loop ${t.hz.toFixed(0)} Hz; leader lost ${t.lost}×`,
);
console.log(
  `tracking error while moving, RMS over 12 joints: teleop ${(t.rms * 1000).toFixed(1)} mrad vs the follower commanded the hand directly (same run) ${(d.rms * 1000).toFixed(1)} mrad — ratio ${(t.rms / d.rms).toFixed(2)}× (loop ${d.hz.toFixed(0)} Hz)`,
);
const EP = 3;
const S = 3;
const R = 2;
const s = await session(EP, S, R);
const ideal = EP * S + (EP - 1) * R;
console.log(
  `episodes per operator hour (${EP} × ${S} s takes, ${R} s resets): ${((s.kept.length / s.operatorSeconds) * 3600).toFixed(0)} measured (${s.operatorSeconds.toFixed(1)} s incl. the 3 s engage ramp and files) vs ${((EP / ideal) * 3600).toFixed(0)} for takes + resets alone — ${(s.operatorSeconds / ideal).toFixed(2)}× the ideal time`,
);
process.exit(0);
