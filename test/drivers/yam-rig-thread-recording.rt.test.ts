// The recorder drains the rig thread's every motor cycle from shared memory, so a stalled main
// thread costs the recording nothing: a hold on the YAM's rig thread (over socat ptys to emulated
// arms in a thread of their own) is recorded while this thread blocks for 2 s, and the episode file
// holds every cycle, numbered without a gap. A ring too small for the stall drops cycles, and the
// recording says how many in words (summary, event, end metadata) — never silently.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { ControlLoop } from '../../src/rig/control-loop.js';
import type { RigCommand } from '../../src/rig/contract.js';
import { rigCyclesOf } from '../../src/rig/rig-cycle-ring.js';
import { EpisodeRecorder, type RecordingSummary } from '../../src/record/episode-recorder.js';
import { decodeMessage, scanEpisodeFile } from '../../src/record/episode-file-reader.js';
import { EPISODE_END_METADATA_NAME, TOPICS } from '../../src/record/episode-format.js';
import { createThreadedYamCanRig } from '../../drivers/yam/register.js';
import { startEmulatorThread, type EmulatorThread } from '../helpers/emulator-thread.js';

let emu: EmulatorThread;
let dir: string;
before(async () => {
  emu = await startEmulatorThread();
  dir = mkdtempSync(join(tmpdir(), 'tandem-rig-cycles-'));
});
after(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

function busyMs(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

interface Recorded {
  readonly summary: RecordingSummary;
  /** Cycle numbers on /tandem/rig_cycles, in file order, with their stamps (rig clock, s). */
  readonly cycles: { cycle: number; timeS: number; mode: string; positions: number }[];
  readonly recorderEvents: string[];
  readonly end: Map<string, string>;
  /** Rig-clock times the block started and ended. */
  readonly block: [number, number];
}

/** Holds both arms on the rig thread, recorded, with this thread blocked `blockMs` in the middle. */
async function recordHold(name: string, blockMs: number, cycleRingCapacity?: number): Promise<Recorded> {
  await emu.reset();
  const clock = new RealtimeClock();
  const rig = createThreadedYamCanRig(
    { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
    { clock },
    cycleRingCapacity ? { cycleRingCapacity } : {},
  );
  const file = join(dir, `${name}.mcap`);
  const unixOffsetS = Date.now() / 1000 - clock.nowS();
  let summary: RecordingSummary;
  let block: [number, number];
  try {
    await rig.configure();
    await rig.activate();
    const recorder = await EpisodeRecorder.open({
      file,
      rigModel: rig.model,
      metadata: { test: name },
      unixOffsetS,
      rigCycles: rigCyclesOf(rig),
    });
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    const loop = new ControlLoop({ rig, clock, source: () => hold });
    await loop.run({ untilS: clock.nowS() + 0.2 });
    const t0 = clock.nowS();
    busyMs(blockMs);
    block = [t0, clock.nowS()];
    await loop.run({ untilS: clock.nowS() + 0.2 });
    summary = await recorder.close({ outcome: 'test' });
    await rig.deactivate();
  } finally {
    await rig.close();
  }
  const cycles: Recorded['cycles'] = [];
  const recorderEvents: string[] = [];
  const end = new Map<string, string>();
  const topics = new Map<number, { topic: string; schema: number }>();
  const schemas = new Map<number, string>();
  await scanEpisodeFile(file, (r) => {
    if (r.type === 'Schema') schemas.set(r.id, r.name);
    else if (r.type === 'Channel') topics.set(r.id, { topic: r.topic, schema: r.schemaId });
    else if (r.type === 'Metadata' && r.name === EPISODE_END_METADATA_NAME)
      for (const [k, v] of r.metadata) end.set(k, v);
    else if (r.type === 'Message') {
      const ch = topics.get(r.channelId)!;
      const m = decodeMessage(schemas.get(ch.schema)!, r.data) as Record<string, unknown>;
      if (ch.topic === TOPICS.rigCycles) {
        const stamp = m.header as { stamp: { sec: number; nanosec: number } };
        cycles.push({
          cycle: m.cycle as number,
          timeS: stamp.stamp.sec + stamp.stamp.nanosec / 1e9 - unixOffsetS,
          mode: m.mode as string,
          positions: (m.position as ArrayLike<number>).length,
        });
      } else if (ch.topic === TOPICS.events && m.kind === 'recorder') recorderEvents.push(m.message as string);
    }
  });
  return { summary, cycles, recorderEvents, end, block };
}

/** A Damiao motor damps itself after this long without a command. */
const MOTOR_WATCHDOG_S = 0.4;

test('a 2 s stall of the main thread during a recorded hold: the episode file holds every one of the rig thread’s cycles, numbered without a gap', async () => {
  const r = await recordHold('stall-2s', 2000);
  assert.equal(r.summary.status, 'finished', r.summary.failure);
  assert.deepEqual(r.summary.problems, []);
  const { cycles } = r;
  assert.ok(cycles.length > 0, 'cycles were recorded');
  for (let i = 1; i < cycles.length; i++)
    assert.equal(
      cycles[i].cycle,
      cycles[i - 1].cycle + 1,
      `cycle ${cycles[i - 1].cycle} is followed by ${cycles[i].cycle}`,
    );
  // The stall is covered by the rig thread's own cycles, stamped while this thread was blocked: no
  // stretch of it as long as a motor's watchdog (400 ms) went without a cycle. How close the cycles
  // come to 250 Hz is a timing figure, measured by `npm run bench -- rig-isolation`, not here.
  const stamps = [
    r.block[0],
    ...cycles.map((c) => c.timeS).filter((t) => t > r.block[0] && t < r.block[1]),
    r.block[1],
  ];
  const longestGapS = Math.max(...stamps.slice(1).map((t, i) => t - stamps[i]));
  assert.ok(
    stamps.length > 2 && longestGapS < MOTOR_WATCHDOG_S,
    `${stamps.length - 2} cycles recorded during the ${(r.block[1] - r.block[0]).toFixed(2)} s stall, the longest stretch without one ${(longestGapS * 1000).toFixed(0)} ms`,
  );
  assert.ok(cycles.every((c) => c.positions === 14));
  assert.equal(r.summary.rigCycles?.lost, 0);
  assert.equal(r.summary.rigCycles?.recorded, cycles.length);
  assert.equal(r.end.get('rig_cycles_lost'), '0');
  assert.equal(r.end.get('rig_cycles_recorded'), String(cycles.length));
  assert.deepEqual(r.recorderEvents, []);
});

test('a ring too small for the stall: the lost cycles are counted, said in one sentence (summary, event, end metadata), and match the gaps in the cycle numbers', async () => {
  // 25 cycles = 0.1 s at 250 Hz, against a 0.5 s stall.
  const r = await recordHold('tiny-ring', 500, 25);
  assert.equal(r.summary.status, 'finished', r.summary.failure);
  // ≈ 100 cycles at 250 Hz; fewer when the rig thread itself is slowed, and how many is not the point.
  const lost = r.summary.rigCycles?.lost ?? 0;
  assert.ok(lost > 0, `cycles lost: ${lost}`);
  let gaps = 0;
  for (let i = 1; i < r.cycles.length; i++) gaps += r.cycles[i].cycle - r.cycles[i - 1].cycle - 1;
  assert.equal(gaps, lost, 'every lost cycle is a gap in the recorded numbers, and every gap is counted');
  assert.equal(r.summary.problems.length, 1);
  const sentence = r.summary.problems[0];
  assert.match(sentence, new RegExp(`^The recording lacks ${lost} of the rig thread's motor cycles .*\\.$`));
  assert.equal(sentence.split(/[.!?]\s+[A-Z]/).length, 1, `one sentence: ${sentence}`);
  assert.deepEqual(r.recorderEvents, [sentence]);
  assert.equal(r.end.get('rig_cycles_lost'), String(lost));
  assert.equal(r.end.get('rig_cycles_problem'), sentence);
});
