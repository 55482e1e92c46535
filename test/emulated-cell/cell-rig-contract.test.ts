// The shared Rig contract suite against YamCanRig on the emulated cell: the same driver and byte
// protocol as on the motors-only emulator, but the motors move the arms of a world with gravity,
// objects and (here) a seeded reality gap. On virtual time, with the driver's production 100 ms
// reply deadline: the cell cannot fall behind, however busy the machine.
import { VirtualClock } from '../../src/rig/clocks.js';
import type { ArmSide } from '../../src/rig/contract.js';
import { describeRigContract, tickThrough } from '../rig/contract-suite.js';
import { emulatedMotorDrives } from '../helpers/emulated-yam.js';
import { createEmulatedCell } from '../../src/emulated-cell/emulated-cell.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';

const layout = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 1, seed: 4 }).layouts[0];

describeRigContract('YamCanRig on the emulated cell (gap seed:2, virtual time)', async () => {
  const clock = new VirtualClock();
  const cell = await createEmulatedCell({
    task: getTask('bottles-in-the-bin'),
    layout,
    gap: { kind: 'seed', seed: 2 },
    clock,
  });
  return {
    rig: cell.rig,
    clock,
    advance: (seconds: number) => tickThrough(cell.rig, clock, seconds),
    dispose: () => cell.close(),
    motors: () => emulatedMotorDrives(cell.emulated),
    injectFault: (side: ArmSide) => cell.bus(side).inject({ kind: 'status', motor: 3, status: 0xa }),
  };
});
