/**
 * The cell's thread: the world and the two arms' bus emulators (motors, their watchdogs, the USB
 * adapters' bytes) run here, on this thread's wall clock, as a physical cell runs beside the
 * station — a busy station thread cannot slow the world, and the world's physics costs the station
 * nothing. The rig thread speaks to the adapters over MessagePorts (drivers/emulators/port-binding.ts);
 * what the station may see of the world is published in shared memory (cell-thread-memory.ts)
 * every PUBLISH_PERIOD_MS.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { ARM_SIDES, type ArmSide, type RigModel } from '../rig/contract.js';
import type { Layout } from '../tasks/types.js';
import { getTask } from '../tasks/registry.js';
import { STATION_ARMS } from '../tasks/station.js';
import type { CanTransport } from '../../drivers/can/bus.js';
import { STATUS_LOST_COMMUNICATION } from '../../drivers/damiao/protocol.js';
import { AdapterEmulator } from '../../drivers/emulators/adapter-emulator.js';
import { YamBusEmulator } from '../../drivers/emulators/yam-bus-emulator.js';
import { serveAdapterOnPort } from '../../drivers/emulators/port-binding.js';
import { cellTruth, type CellGap } from './cell-truth.js';
import { CellWorld } from './cell-world.js';
import { CS, CellBehindWord, CellThreadMemory, type CellThreadLayout } from './cell-thread-memory.js';

/** What the main thread sends (see createThreadedCell). */
export interface CellThreadInit {
  readonly taskId: string;
  readonly layout: Layout;
  readonly gap: CellGap;
  readonly placementSeed: number;
  readonly rigModel: RigModel;
  readonly transport: CanTransport;
  /** The adapters' device ends, per arm. */
  readonly ports: Record<ArmSide, MessagePort>;
  /** Where the rig thread reads how far the world is behind real time (CellBehindWord). */
  readonly behind: SharedArrayBuffer;
}

export type CellThreadMessage =
  | { readonly ready: true; readonly layout: CellThreadLayout; readonly buffer: SharedArrayBuffer }
  | { readonly closed: true };

/** A tracker's sampling rate and more than the cameras' frame rate; the rig's faults see a fall-behind within it. */
const PUBLISH_PERIOD_MS = 5;

const init = workerData as CellThreadInit;
const task = getTask(init.taskId);
const truth = cellTruth(init.gap);
const world = await CellWorld.create({
  rigModel: init.rigModel,
  task,
  layout: init.layout,
  truth,
  placementSeed: init.placementSeed,
});
const buses: YamBusEmulator[] = [];
const stops: (() => void)[] = [];
for (const side of ARM_SIDES) {
  const bus = new YamBusEmulator({ plant: world });
  buses.push(bus);
  world.attach(side, bus);
  stops.push(
    serveAdapterOnPort(
      new AdapterEmulator(init.transport, bus, { replyLatencyMs: truth.truth.replyLatencyMs }),
      init.ports[side],
    ),
  );
}

// How the motors were commanded, kept where a busy station cannot reach: the gap a powered motor
// went without a command, and every time its own watchdog damped it.
let watchdogTrips = 0;
let longestGapS = 0;
const wasLost = new Map<object, boolean>();
for (const bus of buses) {
  for (const m of bus.motors.values()) {
    let lastS = NaN;
    let powered = false;
    m.onMit((_command, accepted) => {
      const now = performance.now() / 1000;
      if (powered && now - lastS > longestGapS) longestGapS = now - lastS;
      lastS = now;
      powered = accepted;
    });
  }
}

const first = world.snapshot();
const regions = [...new Set(task.fixtureKinds.flatMap((k) => k.regions.map((r) => r.id)))];
const layout: CellThreadLayout = {
  links: first.links.map((l) => l.name),
  objects: first.objects.map((o) => ({ id: o.id, kind: o.kind })),
  fixtures: first.fixtures.map((f) => ({ id: f.id, kind: f.kind })),
  regions,
};
const memory = new CellThreadMemory(layout);
const behind = new CellBehindWord(init.behind);
let lagPeakTakes = memory.lagPeakTakes;

function pose(slot: Float64Array, at: number, p: { position: readonly number[]; quaternion: readonly number[] }): void {
  slot[at] = p.position[0];
  slot[at + 1] = p.position[1];
  slot[at + 2] = p.position[2];
  slot[at + 3] = p.quaternion[0];
  slot[at + 4] = p.quaternion[1];
  slot[at + 5] = p.quaternion[2];
  slot[at + 6] = p.quaternion[3];
}

function publish(): void {
  // Judges every motor's watchdog and brings the world up to now, even when no frame arrives —
  // once a host has spoken to a motor (the world's clock starts then, as in CellWorld).
  if (world.running) for (const bus of buses) bus.advanceAll();
  for (const bus of buses) {
    for (const m of bus.motors.values()) {
      const lost = m.status === STATUS_LOST_COMMUNICATION;
      if (lost && !wasLost.get(m)) watchdogTrips++;
      wasLost.set(m, lost);
    }
  }
  const takes = memory.lagPeakTakes;
  if (takes !== lagPeakTakes) {
    lagPeakTakes = takes;
    world.takeLagPeakMs();
  }
  const snap = world.snapshot();
  const sightings = world.sightings();
  const t = world.timing();
  const slot = memory.begin();
  slot[CS.WORLD_S] = t.worldS;
  slot[CS.WALL_S] = t.wallS;
  slot[CS.BUSY_FRACTION] = t.busyFraction;
  slot[CS.MAX_LAG_MS] = t.maxLagMs;
  slot[CS.BEHIND_EVENTS] = t.behindEvents;
  slot[CS.LAG_PEAK_MS] = world.lagPeakMs();
  slot[CS.BEHIND_NOW_MS] = world.behindNowMs();
  behind.set(world.behindNowMs());
  slot[CS.WATCHDOG_TRIPS] = watchdogTrips;
  slot[CS.LONGEST_COMMAND_GAP_MS] = longestGapS * 1000;
  slot[CS.GRIPPER_LEFT] = snap.grippers?.left ?? NaN;
  slot[CS.GRIPPER_RIGHT] = snap.grippers?.right ?? NaN;
  snap.links.forEach((l, i) => pose(slot, memory.offLinks + 7 * i, l.pose));
  snap.objects.forEach((o, i) => pose(slot, memory.offObjects + 7 * i, o.pose));
  snap.fixtures.forEach((f, i) => pose(slot, memory.offFixtures + 7 * i, f.pose));
  sightings.forEach((s, i) => {
    const at = memory.offSightings + 4 * i;
    slot[at] = s.region === undefined ? -1 : regions.indexOf(s.region);
    slot[at + 1] = s.upright ? 1 : 0;
    slot[at + 2] = s.offTable ? 1 : 0;
    slot[at + 3] = s.heldBy === undefined ? -1 : STATION_ARMS.indexOf(s.heldBy);
  });
  memory.end();
}

publish();
const timer = setInterval(publish, PUBLISH_PERIOD_MS);

parentPort!.on('message', (m: { op: 'close' }) => {
  if (m.op !== 'close') return;
  clearInterval(timer);
  for (const stop of stops) stop();
  world.free();
  parentPort!.postMessage({ closed: true } satisfies CellThreadMessage);
  parentPort!.close();
});
// Ready once this thread's event loop turns, not when its module has run: under load the two were
// seconds apart, and a rig that spoke to the adapters meanwhile found them silent.
setImmediate(() => parentPort!.postMessage({ ready: true, layout, buffer: memory.buffer } satisfies CellThreadMessage));
