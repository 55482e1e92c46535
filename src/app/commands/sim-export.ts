/**
 * `tandem sim export-mjcf`: the sim's scene for one layout as MJCF, for MuJoCo. The export lives in
 * src/sim (it is the sim's scene); this file reads the files and turns bad input into one sentence.
 */
import { UserError, type CliCommand } from '../command.js';
import { yamRigModel } from '../../rig/yam.js';
import { exportMjcf } from '../../sim/mjcf-export.js';
import { SceneError } from '../../sim/scene.js';
import { writeNewFile } from './layouts.js';
import { calibrationArg, rolloutLayoutArgs } from './sim.js';

const exportMjcfCommand: CliCommand = {
  path: ['sim', 'export-mjcf'],
  summary: "write one layout's sim scene (arms, table, fixtures, objects) as MJCF for MuJoCo",
  help: `Usage: tandem sim export-mjcf --layouts FILE --layout I [-o scene.xml [--force]] [--calibration FILE]

Builds layout I in the sim exactly as 'tandem sim rollout' does and writes that scene as MJCF:
both arms (the rig model's chain, link masses, joint end stops, damping, friction and armature
from the sim calibration, a position servo per joint at the rig's kp/kd and torque limit), the
table, fixtures and objects with the catalogue's shapes, masses and frictions at the layout's
poses. Load it in MuJoCo (mujoco-js, python mujoco, simulate). What maps how: docs/sim.md.

  --layouts FILE      layout set written by 'tandem layouts sample'
  --layout I          layout index (0-based)
  -o, --output FILE   file to write (default: stdout); an existing file is kept unless --force
  --calibration FILE  sim calibration record (default: the built-in one)`,
  options: {
    layouts: { type: 'string' },
    layout: { type: 'string' },
    output: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    calibration: { type: 'string' },
  },
  async run(args, io) {
    const { layout, task } = rolloutLayoutArgs(args, io);
    const calibration = calibrationArg(args, io);
    let xml: string;
    try {
      xml = (await exportMjcf({ rigModel: yamRigModel(), task, layout, calibration })).xml;
    } catch (e) {
      if (e instanceof SceneError) throw new UserError(`Cannot export layout ${layout.index}: ${e.message}`);
      throw e;
    }
    const out = args.values.output;
    if (typeof out === 'string' && out.length > 0) {
      writeNewFile(io, out, xml, args.values.force === true);
      io.err(`Wrote ${task.id} layout ${layout.index} as MJCF to ${out}\n`);
    } else {
      io.out(xml);
    }
    return 0;
  },
};

export const commands: CliCommand[] = [exportMjcfCommand];
