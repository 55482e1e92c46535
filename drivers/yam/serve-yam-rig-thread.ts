/**
 * Runs a YamCanRig's motor loop in the thread that built it (src/rig/rig-thread-loop.ts), with the
 * frame counters the main thread's proxy reads: the one loop behind both the hardware rig thread
 * and the emulated cell's rig thread.
 */
import type { RigThreadMemory } from '../../src/rig/rig-thread-memory.js';
import { RigCycleRing } from '../../src/rig/rig-cycle-ring.js';
import { serveRigThread, type RigThreadClock, type RigThreadPort } from '../../src/rig/rig-thread-loop.js';
import type { YamCanRig } from './yam-can-rig.js';

export async function serveYamRigThread(
  rig: YamCanRig,
  clock: RigThreadClock,
  memory: RigThreadMemory,
  port: RigThreadPort,
  o: { readonly rateHz: number; readonly cycles: SharedArrayBuffer },
): Promise<void> {
  const framesOut: [number, number] = [0, 0];
  await serveRigThread(rig, clock, memory, port, {
    rateHz: o.rateHz,
    cycles: new RigCycleRing(o.cycles),
    diagnostics: () => rig.diagnostics(),
    framesOut: () => {
      framesOut[0] = rig.link('left')?.bus.stats.framesOut ?? 0;
      framesOut[1] = rig.link('right')?.bus.stats.framesOut ?? 0;
      return framesOut;
    },
  });
}
