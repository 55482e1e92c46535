import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError, type CliCommand, type ParsedCommandArgs } from '../command.js';
import type { ArmSide } from '../../rig/contract.js';
import type { Pose3 } from '../../tasks/geometry.js';
import { DEFAULT_BASE_POSES, yamRigModel } from '../../rig/yam.js';
import { rigToUrdf } from '../../rig/urdf.js';

/** "x,y,z[,yawDeg]" in the table frame → a base pose. */
function basePoseOption(args: ParsedCommandArgs, side: ArmSide): Pose3 {
  const raw = args.values[`${side}-base`];
  if (raw === undefined) return DEFAULT_BASE_POSES[side];
  const parts = String(raw)
    .split(',')
    .map((p) => p.trim());
  const nums = parts.map((p) => (p === '' ? NaN : Number(p)));
  if ((nums.length !== 3 && nums.length !== 4) || nums.some((n) => !Number.isFinite(n))) {
    throw new UserError(
      `--${side}-base must be x,y,z in metres with an optional yaw in degrees (e.g. -0.4,0.3,0,0), not '${String(raw)}'.`,
    );
  }
  const [x, y, z, yawDeg = 0] = nums;
  if (Math.abs(x) > 5 || Math.abs(y) > 5 || Math.abs(z) > 5)
    throw new UserError(
      `--${side}-base puts the ${side} arm more than 5 m from the table centre; positions are in metres.`,
    );
  const half = (yawDeg * Math.PI) / 360;
  return { position: [x, y, z], quaternion: [0, 0, Math.sin(half), Math.cos(half)] };
}

export const commands: CliCommand[] = [
  {
    path: ['rig', 'urdf'],
    summary: 'export the two-arm rig model as URDF (for ROS tools and the 3D view)',
    help: `Usage: tandem rig urdf [-o FILE] [--left-base X,Y,Z[,YAW_DEG]] [--right-base X,Y,Z[,YAW_DEG]]

Writes one URDF with both YAM arms on the table: root link "table" (the table frame: origin at the
top surface's centre, x across the table, z up), each arm's base at its base pose, revolute joints
named left_joint1..6 / right_joint1..6 with the bench limits, motor effort and velocity, and the
grippers as prismatic fingers.

  -o, --output FILE         write to FILE instead of standard output
  --left-base X,Y,Z[,YAW]   left arm base in the table frame, metres and degrees (default -0.4,0.3,0,0)
  --right-base X,Y,Z[,YAW]  right arm base (default -0.4,-0.3,0,0)
  A value starting with '-' needs '=': --left-base=-0.4,0.3,0,0

Examples:
  tandem rig urdf -o yam-bimanual.urdf
  tandem rig urdf --left-base=-0.45,0.3,0,5 -o rig.urdf`,
    options: {
      output: { type: 'string', short: 'o' },
      'left-base': { type: 'string' },
      'right-base': { type: 'string' },
    },
    async run(args, io) {
      const model = yamRigModel({ left: basePoseOption(args, 'left'), right: basePoseOption(args, 'right') });
      const urdf = rigToUrdf(model);
      const output = args.values.output;
      if (output === undefined) {
        io.out(urdf);
        return;
      }
      if (typeof output !== 'string' || output === '') throw new UserError('--output needs a file name.');
      const path = resolve(io.cwd, output);
      try {
        writeFileSync(path, urdf);
      } catch (e) {
        throw new UserError(
          `Could not write the URDF to ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'its folder does not exist' : (e as Error).message}.`,
        );
      }
      io.err(`Wrote the ${model.name} URDF (2 arms, 12 revolute joints, 4 finger joints) to ${path}.\n`);
    },
  },
];
