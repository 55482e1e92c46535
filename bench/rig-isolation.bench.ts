/**
 * Does the motor loop survive a busy station? The YAM (both arms) over socat ptys against emulated
 * arms that run in a thread of their own (so the motors' record — when each MIT frame arrived,
 * whether a motor's own 400 ms watchdog tripped — is kept where the station's stalls cannot reach),
 * at 250 Hz, in two arms measured in the same run:
 *
 *   rig thread  the station's 'yam-can' rig: YamCanRig, supervisor and loop in the rig thread; the
 *               main thread writes the hold pose at 250 Hz through the proxy, as `rig hold` does
 *   in-thread   today's path before the rig thread: YamCanRig and the ControlLoop on the main thread
 *
 * and three conditions: quiet; the main thread busy-blocked for 500 ms every 1.5 s (a GC pause, a big
 * synchronous request, a slow client); a busy station (busy-station.ts: a Foxglove viewer flooding
 * unsubscribes, 10 MiB policy uploads one after another, a paired report rendered every 1.5 s, all
 * served by the station's own code on the main thread). Printed per arm × condition: the motor
 * loop's achieved rate and wake-up jitter, the longest gap between two commands to one motor
 * (measured by the emulated motor), the supervisor's watchdog holds, motors that damped by their
 * own watchdog, faults, and whether the issue's goals held (p99 jitter < 1 ms, no motor without a
 * command for more than 20 ms).
 *
 *   npm run bench -- rig-isolation     (RIG_ISOLATION_SECONDS=6 per run by default; 60 for the issue's figure)
 */
import { RealtimeClock } from '../src/rig/clocks.js';
import { ControlLoop, type LoopStats } from '../src/rig/control-loop.js';
import { ARM_SIDES, type Rig, type RigCommand } from '../src/rig/contract.js';
import { SerialCanBus } from '../drivers/can/serial-can-bus.js';
import { YamCanRig } from '../drivers/yam/yam-can-rig.js';
import { createThreadedYamCanRig } from '../drivers/yam/register.js';
import { startEmulatorThread, type EmulatorThread } from '../test/helpers/emulator-thread.js';
import { loadavg } from 'node:os';
import { startBusyStation, type BusyStation } from './busy-station.js';

const SECONDS = Number(process.env.RIG_ISOLATION_SECONDS ?? 6);
const RATE_HZ = 250;
const BLOCK_MS = 500;
const BLOCK_EVERY_MS = 1500;

type Condition = 'quiet' | 'blocked 500 ms / 1.5 s' | 'busy station';
type Arm = 'rig thread' | 'in-thread';

interface Row {
  arm: Arm;
  condition: Condition;
  stats: LoopStats;
  longestGapMs: number;
  watchdogHolds: number;
  motorsDamped: number;
  blocks: number;
  /** What the busy station served meanwhile. */
  load: string;
  fault: string;
}

function busyMs(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

async function run(emu: EmulatorThread, arm: Arm, condition: Condition): Promise<Row> {
  await emu.reset();
  const clock = new RealtimeClock();
  const config = { type: 'yam-can', transport: 'slcan', ports: emu.links } as const;
  let rig: Rig;
  if (arm === 'rig thread') rig = createThreadedYamCanRig(config, { clock }, { rateHz: RATE_HZ });
  else {
    const buses = {
      left: new SerialCanBus({ transport: 'slcan', path: emu.links.left }),
      right: new SerialCanBus({ transport: 'slcan', path: emu.links.right }),
    };
    rig = new YamCanRig({ buses, clock, safety: { controlPeriodS: 1 / RATE_HZ } });
  }
  let blocks = 0;
  let blocker: ReturnType<typeof setInterval> | undefined;
  let station: BusyStation | undefined;
  let load = '';
  try {
    await rig.configure();
    await rig.activate();
    rig.takeSafetyEvents();
    await emu.resetRecords();
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    let holds = 0;
    let fault = '';
    const loop = new ControlLoop({
      rig,
      clock,
      rateHz: RATE_HZ,
      source: (state) => {
        if (state.faults.length > 0 && fault === '') fault = state.faults[0].message;
        for (const e of rig.takeSafetyEvents()) if (e.kind === 'watchdog-hold') holds++;
        return hold;
      },
    });
    if (condition === 'busy station') station = await startBusyStation();
    if (condition === 'blocked 500 ms / 1.5 s') {
      blocker = setInterval(() => {
        blocks++;
        busyMs(BLOCK_MS);
      }, BLOCK_EVERY_MS);
    }
    const mainStats = await loop.run({ untilS: clock.nowS() + SECONDS });
    if (blocker) clearInterval(blocker);
    if (station) {
      await station.stop();
      const c = station.counts();
      load = `${c.floodRequests} flood requests (${c.floodReconnects} reconnects), ${c.uploads} uploads, ${c.reports} reports`;
      station = undefined;
    }
    const st = await emu.status();
    const motors = ARM_SIDES.flatMap((s) => st.motors[s] ?? []);
    let stats = mainStats;
    if (arm === 'rig thread') {
      const t = await (rig as ReturnType<typeof createThreadedYamCanRig>).loopStats();
      stats = t;
      holds = t.watchdogHolds;
    }
    await rig.deactivate();
    return {
      arm,
      condition,
      stats,
      longestGapMs: Math.max(...motors.map((m) => m.longestGapMs)),
      watchdogHolds: holds,
      motorsDamped: motors.filter((m) => m.everLost).length,
      blocks,
      load,
      fault,
    };
  } finally {
    if (blocker) clearInterval(blocker);
    await station?.stop();
    await rig.close?.();
  }
}

const emu = await startEmulatorThread({ replyLatencyMs: 1 });
const rows: Row[] = [];
try {
  console.log(
    `rig isolation: both arms, ${RATE_HZ} Hz, ${SECONDS} s per run, emulated motors (1 ms reply latency) in their own thread over socat ptys; load before ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  for (const condition of ['quiet', 'blocked 500 ms / 1.5 s', 'busy station'] as Condition[]) {
    for (const arm of ['rig thread', 'in-thread'] as Arm[]) rows.push(await run(emu, arm, condition));
  }
} finally {
  await emu.stop();
}
const f = (x: number, d = 2) => x.toFixed(d);
const goals = (r: Row): string =>
  `${r.stats.jitterP99Ms < 1 ? 'p99 ok' : 'p99 MISSED'}, ${r.longestGapMs <= 20 ? 'gap ok' : 'gap MISSED'}`;
console.log(
  'arm          condition                achieved Hz  jitter p50 / p99 / max ms   longest gap to a motor  watchdog holds  motors damped  blocks  goals (p99 < 1 ms, gap ≤ 20 ms)  fault',
);
for (const r of rows) {
  console.log(
    `${r.arm.padEnd(12)} ${r.condition.padEnd(24)} ${f(r.stats.achievedHz, 1).padStart(11)}  ${`${f(r.stats.jitterP50Ms)} / ${f(r.stats.jitterP99Ms)} / ${f(r.stats.jitterMaxMs)}`.padEnd(26)} ${`${f(r.longestGapMs, 1)} ms`.padStart(22)}  ${String(r.watchdogHolds).padStart(14)}  ${`${r.motorsDamped}/14`.padStart(13)}  ${String(r.blocks).padStart(6)}  ${goals(r).padEnd(31)}  ${r.fault ? r.fault.slice(0, 90) : '-'}`,
  );
}
for (const r of rows) if (r.load) console.log(`${r.arm}, busy station: the main thread served ${r.load}`);
const q = (arm: Arm, c: Condition) => rows.find((r) => r.arm === arm && r.condition === c)!;
for (const c of ['blocked 500 ms / 1.5 s', 'busy station'] as Condition[]) {
  console.log(
    `ratio in-thread / rig thread, ${c}: longest gap ${f(q('in-thread', c).longestGapMs / q('rig thread', c).longestGapMs, 1)}×, ` +
      `p99 jitter ${f(q('in-thread', c).stats.jitterP99Ms / Math.max(q('rig thread', c).stats.jitterP99Ms, 1e-3), 1)}×`,
  );
}
console.log(
  `load after ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
