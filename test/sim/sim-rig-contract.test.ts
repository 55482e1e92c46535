import { describeRigContract, tickThrough } from '../rig/contract-suite.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/index.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';
import { createScene } from '../../src/sim/scene.js';
import { SimRig } from '../../src/sim/sim-rig.js';

// SimRig passes the same contract suite as the mirror and the CAN rig on its emulator: same
// supervisor, same lifecycle, with real (simulated) gravity and inertia underneath.
describeRigContract('SimRig', async () => {
  const scene = await createScene({
    rigModel: yamRigModel(),
    task: BOTTLES_IN_THE_BIN,
    layout: { index: 0, tier: 1, fixtures: [{ id: 'bin', kind: 'bin', pose: { x: 0, y: -0.3, yawRad: 0 } }], objects: [] },
    calibration: DEFAULT_SIM_CALIBRATION,
    startPosition: [0, 0.8, 0.8, 0, 0, 0, 0.5, 0, 0.8, 0.8, 0, 0, 0, 0.5],
  });
  const rig = new SimRig({ scene });
  // What the simulated joints are driven with (the sim's motor commands), and a motor fault as a
  // driver would report it.
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
    injectFault: (side) => (rig['faults'] = [...rig['faults'], { kind: 'motor-fault', arm: side, joint: 2, message: `The ${side} arm joint 3 motor reports over-current.` }]),
    clearFaults: () => (rig['faults'] = []),
  };
});
