/**
 * The emulated cell's rig thread: the station's unchanged YamCanRig, its safety supervisor and the
 * fixed-rate motor loop (src/rig/rig-thread-loop.ts), speaking SLCAN or Damiao USB-CAN bytes to
 * the adapters in the cell's thread over MessagePorts — as the yam-can rig thread speaks to USB
 * adapters. The cell's own faults (its world falling behind real time) come from the shared memory
 * the cell's thread writes, read every tick as a real cell's interlock inputs would be.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { ARM_SIDES, type ArmSide, type RigFault, type RigModel } from '../rig/contract.js';
import type { FeedForwardSettings } from '../rig/gravity.js';
import { RigThreadMemory } from '../rig/rig-thread-memory.js';
import { RigThreadClock, SharedInterlock, type RigThreadPort } from '../rig/rig-thread-loop.js';
import type { CanTransport } from '../../drivers/can/bus.js';
import { SerialCanBus } from '../../drivers/can/serial-can-bus.js';
import { MessagePortBinding } from '../../drivers/emulators/port-binding.js';
import { emulatedPath } from '../../drivers/emulators/in-process.js';
import { YamCanRig } from '../../drivers/yam/yam-can-rig.js';
import { serveYamRigThread } from '../../drivers/yam/serve-yam-rig-thread.js';
import { CellBehindWord, emulationBehindFault } from './cell-thread-memory.js';

/** What the main thread sends (see createThreadedCell). */
export interface CellRigThreadInit {
  readonly model: RigModel;
  readonly transport: CanTransport;
  readonly replyDeadlineMs?: number;
  readonly feedForward: FeedForwardSettings | false;
  /** The adapters' host ends, per arm. */
  readonly ports: Record<ArmSide, MessagePort>;
  /** How far the cell's world is behind real time (CellBehindWord). */
  readonly behind: SharedArrayBuffer;
}

const data = workerData as {
  buffer: SharedArrayBuffer;
  init: CellRigThreadInit;
  rateHz: number;
  hasInterlock: boolean;
  cycles: SharedArrayBuffer;
};
const init = data.init;
const memory = new RigThreadMemory(data.buffer);
const clock = new RigThreadClock(memory);
const behind = new CellBehindWord(init.behind);
const NO_FAULTS: readonly RigFault[] = [];
let behindMs = 0;
let behindFault: readonly RigFault[] = NO_FAULTS;
/** The cell's faults: allocation-free while the world keeps up, one sentence per new fall-behind figure. */
function cellFaults(): readonly RigFault[] {
  const ms = behind.get();
  if (ms !== behindMs) {
    behindMs = ms;
    behindFault = ms > 0 ? [emulationBehindFault(ms)] : NO_FAULTS;
  }
  return behindFault;
}

const binding = new MessagePortBinding(new Map(ARM_SIDES.map((side) => [emulatedPath(side), init.ports[side]])));
const buses = Object.fromEntries(
  ARM_SIDES.map((side) => [
    side,
    new SerialCanBus({ transport: init.transport, path: emulatedPath(side), binding, reconnectIntervalMs: 50 }),
  ]),
) as Record<ArmSide, SerialCanBus>;
const rig = new YamCanRig({
  buses,
  model: init.model,
  clock,
  safety: { ...(data.hasInterlock ? { interlock: new SharedInterlock(memory) } : {}), controlPeriodS: 1 / data.rateHz },
  ...(init.replyDeadlineMs !== undefined ? { replyDeadlineMs: init.replyDeadlineMs } : {}),
  feedForward: init.feedForward,
  externalFaults: cellFaults,
});
await serveYamRigThread(rig, clock, memory, parentPort as unknown as RigThreadPort, {
  rateHz: data.rateHz,
  cycles: data.cycles,
});
