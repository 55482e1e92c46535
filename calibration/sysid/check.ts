/** `tandem sysid check`: how well a calibration tracks episodes, without fitting. */
import type { RigModel } from '../../src/rig/contract.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import type { SimCalibration } from '../../src/sim/calibration.js';
import { ARM_JOINT_INDICES, REPLAY_PHASES, type ReplayPhase } from './replay.js';
import { ReplayPool } from './replay-pool.js';
import { overallRms, perJointRms, phaseRms } from './residuals.js';
import { SysidError } from './sysid-error.js';
import { readUsable } from './usable-episodes.js';

/** `tandem sysid check`: the tracking error of a calibration on episodes, without fitting. */
export async function checkSysid(o: {
  files: readonly string[];
  model: RigModel;
  calibration: SimCalibration;
  workers?: number;
  layoutSets?: readonly LayoutSet[];
}): Promise<{
  readonly episodes: readonly {
    readonly file: string;
    readonly rmsRad: readonly number[];
    readonly problem?: string;
    readonly lostObject?: string;
  }[];
  readonly excluded: readonly { readonly file: string; readonly reason: string }[];
  readonly perJoint: readonly number[];
  readonly overall: number;
  /** Per phase over every episode: compared samples and RMS over the arm joints, rad. */
  readonly phases: readonly { readonly phase: ReplayPhase; readonly samples: number; readonly rmsRad: number }[];
}> {
  const { usable, excluded } = await readUsable(o.files, o.model, o.layoutSets);
  if (usable.length === 0)
    throw new SysidError(
      `None of the ${o.files.length} episode${o.files.length === 1 ? '' : 's'} can be replayed: ${excluded.map((e) => e.reason).join(' ')}`,
    );
  const pool = await ReplayPool.start(
    usable.map((e) => e.file),
    o.workers,
    o.layoutSets,
  );
  try {
    const [replies] = await pool.replayAll(
      [o.calibration],
      usable.map((_, i) => i),
    );
    return {
      episodes: replies.map((r, i) => ({
        file: usable[i].file,
        rmsRad: ARM_JOINT_INDICES.map((j) => r.rmsRad[j]),
        problem: r.problem,
        lostObject: r.lostObject,
      })),
      excluded,
      perJoint: perJointRms(replies),
      overall: overallRms(replies),
      phases: REPLAY_PHASES.map((phase) => ({ phase, ...phaseRms(replies, phase) })),
    };
  } finally {
    await pool.close();
  }
}
