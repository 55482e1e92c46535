/**
 * Control-loop rate and jitter of YamCanRig against the YAM emulator across real ptys (socat), both
 * arms, at 250 / 500 / 1000 Hz — beside the vendor's style measured in the same run: poll one motor,
 * wait for its reply (up to 10 ms), then the next, at a nominal 250 Hz. The emulators run in their own
 * processes (`tandem rig emulate`) with 1 ms reply latency, as a real motor might take.
 *
 *   npm run bench -- rig-loop          (RIG_BENCH_SECONDS=3 by default per rate)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RealtimeClock } from '../src/rig/clocks.js';
import { ControlLoop } from '../src/rig/control-loop.js';
import { MOTOR_RANGES } from '../src/rig/motors.js';
import { YAM_KD, YAM_KP } from '../src/rig/yam.js';
import { SerialCanBus } from '../drivers/can/serial-can-bus.js';
import type { CanFrame } from '../drivers/can/frame.js';
import { mitFrame, FEEDBACK_ID_OFFSET } from '../drivers/damiao/protocol.js';
import { YamCanRig } from '../drivers/yam/yam-can-rig.js';

const SECONDS = Number(process.env.RIG_BENCH_SECONDS ?? 3);
const LATENCY_MS = 1;
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rig-bench-'));
const links = { left: join(dir, 'left'), right: join(dir, 'right') };
const children: ChildProcess[] = [];

async function startEmulator(link: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin/tandem.js'),
      'rig',
      'emulate',
      '--transport',
      'slcan',
      '--link',
      link,
      '--latency-ms',
      String(LATENCY_MS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const start = Date.now();
  while (!/Press Ctrl-C/.test(out)) {
    if (child.exitCode !== null || Date.now() - start > 30_000)
      throw new Error(`emulator for ${link} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function pct(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1) + 0.5))];
}

interface Row {
  name: string;
  targetHz: number;
  achievedHz: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  late: number;
  cycles: number;
  note: string;
}

async function ours(rateHz: number): Promise<Row> {
  const clock = new RealtimeClock();
  const buses = {
    left: new SerialCanBus({ transport: 'slcan', path: links.left }),
    right: new SerialCanBus({ transport: 'slcan', path: links.right }),
  };
  const rig = new YamCanRig({ buses, clock, safety: { controlPeriodS: 1 / rateHz } });
  try {
    await rig.configure();
    await rig.activate();
    const hold = { position: Float64Array.from(rig.read().position) };
    const loop = new ControlLoop({ rig, clock, rateHz, source: () => hold });
    const s = await loop.run({ untilS: clock.nowS() + SECONDS });
    const faults = rig.read().faults;
    const d = rig.diagnostics();
    await rig.deactivate();
    return {
      name: 'YamCanRig (send all, collect)',
      targetHz: rateHz,
      achievedHz: s.achievedHz,
      p50Ms: s.jitterP50Ms,
      p99Ms: s.jitterP99Ms,
      maxMs: s.jitterMaxMs,
      late: s.lateCycles,
      cycles: s.cycles,
      note: `${d.reduce((a, x) => a + x.missedReplies, 0)} replies >1 cycle late${faults.length ? `; FAULT: ${faults[0].message}` : ''}`,
    };
  } finally {
    await rig.close();
  }
}

/** The vendor's loop: per motor, send its MIT command and wait up to 10 ms for its reply. */
async function sequential(rateHz: number): Promise<Row> {
  const buses = [
    new SerialCanBus({ transport: 'slcan', path: links.left }),
    new SerialCanBus({ transport: 'slcan', path: links.right }),
  ];
  for (const b of buses) await b.open();
  const clock = new RealtimeClock();
  const ranges = [...['DM4340', 'DM4340', 'DM4340', 'DM4310', 'DM4310', 'DM4310'], 'DM4310'].map(
    (m) => MOTOR_RANGES[m as 'DM4310'],
  );
  let waiting: { id: number; resolve: () => void } | undefined;
  const positions = buses.map(() => new Float64Array(7));
  buses.forEach((b, a) =>
    b.onFrame((f: CanFrame) => {
      const id = f.id - FEEDBACK_ID_OFFSET;
      if (id >= 1 && id <= 7) positions[a][id - 1] = (((f.data[1] << 8) | f.data[2]) * 25) / 65535 - 12.5;
      if (waiting && waiting.id === a * 16 + id) waiting.resolve();
    }),
  );
  // Enable, like the vendor does, holding where each motor is.
  for (const [a, b] of buses.entries()) {
    for (let id = 1; id <= 7; id++) {
      b.send({ id, extended: false, data: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc) });
      await new Promise<void>((resolve) => {
        waiting = { id: a * 16 + id, resolve };
        setTimeout(resolve, 10);
      });
    }
  }
  const periodS = 1 / rateHz;
  const cycleMs: number[] = [];
  const jitter: number[] = [];
  let late = 0;
  const t0 = clock.nowS();
  let deadline = t0;
  let cycles = 0;
  let timeouts = 0;
  while (clock.nowS() - t0 < SECONDS) {
    await clock.waitUntil(deadline);
    const woke = clock.nowS();
    jitter.push((woke - deadline) * 1000);
    for (const [a, b] of buses.entries()) {
      for (let id = 1; id <= 7; id++) {
        const i = id - 1;
        b.send(
          mitFrame(
            id,
            {
              positionRad: positions[a][i],
              velocityRadS: 0,
              kp: i < 6 ? YAM_KP[i] : 20,
              kd: i < 6 ? YAM_KD[i] : 0.5,
              torqueNm: 0,
            },
            ranges[i],
          ),
        );
        const got = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 10);
          waiting = { id: a * 16 + id, resolve: () => (clearTimeout(timer), resolve(true)) };
        });
        if (!got) timeouts++;
      }
    }
    const end = clock.nowS();
    cycleMs.push((end - woke) * 1000);
    cycles++;
    if (end - woke > 0.007) late++; // the vendor counts a cycle over 7 ms as late
    deadline += periodS;
    if (end > deadline) deadline += Math.ceil((end - deadline) / periodS) * periodS;
  }
  const span = clock.nowS() - t0;
  for (const [a, b] of buses.entries()) {
    for (let id = 1; id <= 7; id++)
      b.send({ id, extended: false, data: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd) });
    void a;
  }
  await new Promise((r) => setTimeout(r, 50));
  for (const b of buses) await b.close();
  const sortedJ = Float64Array.from(jitter).sort();
  const sortedC = Float64Array.from(cycleMs).sort();
  return {
    name: 'vendor-style sequential poll',
    targetHz: rateHz,
    achievedHz: cycles / span,
    p50Ms: pct(sortedJ, 0.5),
    p99Ms: pct(sortedJ, 0.99),
    maxMs: sortedJ[sortedJ.length - 1],
    late,
    cycles,
    note: `cycle work p50 ${pct(sortedC, 0.5).toFixed(2)} ms, p99 ${pct(sortedC, 0.99).toFixed(2)} ms; ${timeouts} reply timeouts`,
  };
}

try {
  await startEmulator(links.left);
  await startEmulator(links.right);
  const rows: Row[] = [];
  const seq = await sequential(250);
  rows.push(seq);
  for (const hz of [250, 500, 1000]) rows.push(await ours(hz));
  console.log(
    `\nBoth arms (14 motors), SLCAN over socat ptys, emulated reply latency ${LATENCY_MS} ms, ${SECONDS} s per row.`,
  );
  console.log(
    'jitter = wake-up time − deadline; late = cycles more than half a period late (sequential: cycle work > 7 ms, the vendor rule)\n',
  );
  const head = ['loop', 'target Hz', 'achieved Hz', 'jitter p50 ms', 'p99 ms', 'max ms', 'late', 'cycles', 'notes'];
  const table = rows.map((r) => [
    r.name,
    String(r.targetHz),
    r.achievedHz.toFixed(1),
    r.p50Ms.toFixed(3),
    r.p99Ms.toFixed(3),
    r.maxMs.toFixed(3),
    String(r.late),
    String(r.cycles),
    r.note,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  for (const line of [head, ...table]) console.log(line.map((c, i) => c.padEnd(w[i])).join('  '));
  const ours250 = rows[1];
  console.log(
    `\nratio achieved rate at 250 Hz, YamCanRig / sequential: ${(ours250.achievedHz / seq.achievedHz).toFixed(2)}×`,
  );
  for (const r of rows.slice(1))
    console.log(
      `ratio achieved / target, YamCanRig at ${r.targetHz} Hz: ${(r.achievedHz / r.targetHz).toFixed(3)}; sequential at 250 Hz: ${(seq.achievedHz / 250).toFixed(3)}`,
    );
  const host = await import('node:os');
  console.log(
    `host: ${host.cpus().length} cores, load average ${host
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (other work on the machine widens the tails)`,
  );
} finally {
  for (const c of children) c.kill('SIGINT');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('close', r)))));
  rmSync(dir, { recursive: true, force: true });
}
