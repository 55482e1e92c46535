/**
 * Drives a code policy in the Rapier scene the way a SimRig will: joint targets through the
 * MIT law with the model's gains and gravity feedforward, physics sub-stepped under the control
 * rate, privileged state in every observation, scored by the task's own rule.
 * Used until the rollout loop (runEpisode + SimRig) lands; it touches the scene only through
 * its public step/read API.
 */
import { STATE_DIM } from '../../../src/rig/contract.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { createOpenLoopExecutor } from '../../../src/policy/open-loop-executor.js';
import type { Observation, Policy } from '../../../src/policy/contract.js';
import { DEFAULT_SIM_CALIBRATION } from '../../../src/sim/calibration.js';
import { createScene, GRAVITY_Z } from '../../../src/sim/scene.js';
import { newMotorCommand } from '../../../src/sim/sim-arm.js';
import { BOTTLES_IN_THE_BIN } from '../../../src/tasks/bottles-in-the-bin.js';
import type { Layout } from '../../../src/tasks/types.js';

export interface HarnessResult {
  readonly progress: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly unstable?: string;
  readonly finalState: Float64Array;
}

export async function runInSim(policy: Policy, layout: Layout, opts: { seconds?: number; controlHz?: number; seed?: number } = {}): Promise<HarnessResult> {
  const rigModel = yamRigModel();
  const cal = DEFAULT_SIM_CALIBRATION;
  const scene = await createScene({ rigModel, task: BOTTLES_IN_THE_BIN, layout, calibration: cal });
  try {
    const controlHz = opts.controlHz ?? 50;
    const seconds = opts.seconds ?? BOTTLES_IN_THE_BIN.episodeSeconds;
    const substeps = Math.max(1, Math.round(1 / controlHz / cal.physicsStepS));
    const commands = scene.arms.map((arm, a) => {
      const c = newMotorCommand();
      rigModel.arms[a].joints.forEach((j, i) => {
        c.kp[i] = j.kp;
        c.kd[i] = j.kd;
      });
      c.q.set(arm.q);
      c.gripper = 1;
      c.gripperKp = rigModel.arms[a].gripper.kp;
      c.gripperKd = rigModel.arms[a].gripper.kd;
      return c;
    });
    const executor = createOpenLoopExecutor(policy);
    await executor.reset({ seed: opts.seed ?? 0, prompt: BOTTLES_IN_THE_BIN.prompt, rigModel, controlHz });
    const state = (): Float32Array => {
      const s = new Float32Array(STATE_DIM);
      scene.arms.forEach((arm, a) => {
        s.set(arm.q, a * 7);
        s[a * 7 + 6] = arm.gripperPosition();
      });
      return s;
    };
    let unstable: string | undefined;
    const steps = Math.round(seconds * controlHz);
    for (let k = 0; k < steps && !unstable; k++) {
      const tS = k / controlHz;
      const observe = async (): Promise<Observation> => ({ timeS: tS, state: state(), images: {}, prompt: BOTTLES_IN_THE_BIN.prompt, privileged: scene.privilegedState() });
      const action = await executor.step(k, tS, observe);
      commands.forEach((c, a) => {
        for (let i = 0; i < 6; i++) c.q[i] = action.position[a * 7 + i];
        c.gripper = action.position[a * 7 + 6];
      });
      for (let s = 0; s < substeps; s++) {
        scene.arms.forEach((arm, a) => arm.gravityTorque(GRAVITY_Z, commands[a].tauFf));
        scene.step(commands);
      }
      unstable = scene.instability();
    }
    const score = BOTTLES_IN_THE_BIN.scoreProgress(layout, scene.endStates());
    const finalState = new Float64Array(STATE_DIM);
    finalState.set(state());
    return { progress: score.progress, counts: score.counts, unstable, finalState };
  } finally {
    scene.free();
  }
}
