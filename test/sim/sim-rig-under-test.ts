// SimRig on a scene, as the Rig contract suite drives it (either physics engine): what the
// simulated joints are driven with (the sim's motor commands), and a motor fault as a driver would
// report it.
import { tickThrough, type RigUnderTest } from '../rig/contract-suite.js';
import type { PhysicsScene } from '../../src/sim/physics-scene.js';
import { SimRig } from '../../src/sim/sim-rig.js';

export function simRigUnderTest(scene: PhysicsScene): RigUnderTest {
  const rig = new SimRig({ scene });
  const motor = (a: number) => {
    const m = rig['motors'][a];
    if (m.kp.some((k) => k > 0) || m.gripperKp > 0) return 'stiff' as const;
    return m.kd.some((k) => k > 0) || m.gripperKd > 0 ? ('damp' as const) : ('off' as const);
  };
  return {
    rig,
    clock: rig.clock,
    advance: (s) => tickThrough(rig, rig.clock, s),
    dispose: async () => scene.free(),
    motors: async () => ({ left: motor(0), right: motor(1) }),
    injectFault: (side) =>
      (rig['faults'] = [
        ...rig['faults'],
        { kind: 'motor-fault', arm: side, joint: 2, message: `The ${side} arm joint 3 motor reports over-current.` },
      ]),
    clearFaults: () => (rig['faults'] = []),
  };
}
