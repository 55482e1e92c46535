/**
 * The YAM's rig thread: opens the serial ports here, builds YamCanRig (with its safety supervisor)
 * from the same config the registry validated on the main thread, and runs the motor loop
 * (src/rig/rig-thread-loop.ts) until the main thread closes it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RigThreadMemory } from '../../src/rig/rig-thread-memory.js';
import { RigThreadClock, SharedInterlock, type RigThreadPort } from '../../src/rig/rig-thread-loop.js';
import { serveYamRigThread } from './serve-yam-rig-thread.js';
import { ttyBinding } from '../can/tty-binding.js';
import { createYamCanRig, type YamRigThreadInit } from './register.js';

const data = workerData as {
  buffer: SharedArrayBuffer;
  init: YamRigThreadInit;
  rateHz: number;
  hasInterlock: boolean;
  cycles: SharedArrayBuffer;
};
const memory = new RigThreadMemory(data.buffer);
const clock = new RigThreadClock(memory);
const rig = createYamCanRig(
  data.init.config,
  { clock, model: data.init.model, ...(data.hasInterlock ? { interlock: new SharedInterlock(memory) } : {}) },
  { ...data.init.extras, controlPeriodS: 1 / data.rateHz },
  ttyBinding,
);
await serveYamRigThread(rig, clock, memory, parentPort as unknown as RigThreadPort, {
  rateHz: data.rateHz,
  cycles: data.cycles,
});
