/**
 * Control-loop timing on this machine: the RealtimeClock (setTimeout for the coarse wait, then a
 * setImmediate tail) against a same-run naive baseline (setTimeout alone), driving a MirrorRig
 * through the real ControlLoop at 250, 500 and 1000 Hz. Prints jitter p50/p99/max, late cycles and
 * the baseline/realtime ratio of p99 jitter. Seconds per rate: RIG_CLOCK_BENCH_S (default 3).
 */
import { performance } from 'node:perf_hooks';
import { ControlLoop, type LoopStats } from '../src/rig/control-loop.js';
import { RealtimeClock, SteppedClock } from '../src/rig/clocks.js';
import { MirrorRig } from '../src/rig/mirror-rig.js';
import type { Clock } from '../src/rig/contract.js';
import { yamRigModel } from '../src/rig/yam.js';

/** The naive way: sleep the whole remaining time with setTimeout. */
class TimeoutOnlyClock implements Clock {
  private readonly epochMs = performance.now();
  nowS(): number {
    return (performance.now() - this.epochMs) / 1000;
  }
  waitUntil(tS: number): Promise<void> {
    const ms = this.epochMs + tS * 1000 - performance.now();
    return ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));
  }
}

async function run(clock: Clock, rateHz: number, seconds: number): Promise<LoopStats> {
  const rig = new MirrorRig({ model: yamRigModel(), clock });
  await rig.configure();
  await rig.activate();
  const pose = Float64Array.from(rig.read().position);
  const cmd = { position: pose };
  const loop = new ControlLoop({ rig, clock, rateHz, source: () => cmd });
  return loop.run({ cycles: Math.round(seconds * rateHz) });
}

const fmt = (x: number): string => x.toFixed(3).padStart(7);
const seconds = Number(process.env.RIG_CLOCK_BENCH_S ?? 3);
console.log(`control loop on a MirrorRig, ${seconds} s per row (jitter = wake-up time − deadline, ms)`);
console.log('rate    clock                 p50      p99      max   late/cycles  achieved Hz');
for (const rate of [250, 500, 1000]) {
  const naive = await run(new TimeoutOnlyClock(), rate, seconds);
  const rt = await run(new RealtimeClock(), rate, seconds);
  for (const [name, s] of [
    ['setTimeout only', naive],
    ['RealtimeClock', rt],
  ] as const) {
    console.log(
      `${String(rate).padStart(4)} Hz ${name.padEnd(18)} ${fmt(s.jitterP50Ms)}  ${fmt(s.jitterP99Ms)}  ${fmt(s.jitterMaxMs)}  ${String(s.lateCycles).padStart(5)}/${String(s.cycles).padEnd(6)} ${s.achievedHz.toFixed(1).padStart(8)}`,
    );
  }
  console.log(
    `        p99 jitter ratio naive/realtime: ${(naive.jitterP99Ms / Math.max(rt.jitterP99Ms, 1e-6)).toFixed(1)}×`,
  );
}

// Loop overhead without waiting: cycles per second of the loop + supervisor + mirror on a stepped clock,
// and heap growth per cycle (the hot path should allocate only the clock's wait promise).
{
  const clock = new SteppedClock();
  const cycles = 200_000;
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  await run(clock, 1000, cycles / 1000);
  const ms = performance.now() - t0;
  const grew = process.memoryUsage().heapUsed - before;
  console.log(
    `\nstepped clock: ${cycles} cycles in ${ms.toFixed(0)} ms = ${((cycles / ms) * 1000).toFixed(0)} cycles/s (${((ms * 1000) / cycles).toFixed(2)} µs per cycle); heap +${(grew / 1024).toFixed(0)} KiB over the run`,
  );
}
