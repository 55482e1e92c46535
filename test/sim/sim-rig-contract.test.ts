import { describeRigContract } from '../rig/contract-suite.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/index.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';
import { createScene } from '../../src/sim/scene.js';
import { simRigUnderTest } from './sim-rig-under-test.js';

// SimRig passes the same contract suite as the mirror and the CAN rig on its emulator: same
// supervisor, same lifecycle, with real (simulated) gravity and inertia underneath.
describeRigContract('SimRig', async () => {
  const scene = await createScene({
    rigModel: yamRigModel(),
    task: BOTTLES_IN_THE_BIN,
    layout: {
      index: 0,
      tier: 1,
      fixtures: [{ id: 'bin', kind: 'bin', pose: { x: 0, y: -0.3, yawRad: 0 } }],
      objects: [],
    },
    calibration: DEFAULT_SIM_CALIBRATION,
    startPosition: [0, 0.8, 0.8, 0, 0, 0, 0.5, 0, 0.8, 0.8, 0, 0, 0, 0.5],
  });
  return simRigUnderTest(scene);
});
