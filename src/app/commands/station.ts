import { numberOption, type CliCommand } from '../command.js';
import { resolveDataDir } from '../data-dir.js';
import { bringUpStation } from '../station.js';

const station: CliCommand = {
  path: ['station'],
  summary: 'bring the station up (embedded default: emulated cell + sim twin + SQLite) and report what runs',
  help: `Usage: tandem station [--data DIR] [--rig-config FILE] [--hold-seconds S] [--json]

Opens the store in the data directory, creates the configured rig (default: the YAM on the
emulated cell in this process — arms, a bottles layout on the table, a hidden reality gap, the
real byte protocol; no hardware), configures and activates it, holds its pose
under the ${'250'} Hz control loop for S seconds (default 2), damps it, checks the sim twin, and
says which parts this machine cannot run (ROS 2, the Electron shell).

  --rig-config FILE   JSON rig config, e.g. {"type": "yam-can", "transport": "slcan",
                      "ports": {"left": "/dev/ttyACM0", "right": "/dev/ttyACM1"}}
  --hold-seconds S    how long to hold the pose (0.1 to 60, default 2)`,
  options: { 'rig-config': { type: 'string' }, 'hold-seconds': { type: 'string' } },
  async run(args, io) {
    const dataDir = resolveDataDir(args.values.data as string | undefined, io.env, io.cwd);
    const holdSeconds = numberOption(args, 'hold-seconds', 2, 0.1, 60);
    const json = Boolean(args.values.json);
    if (!json) io.out(`tandem station — data in ${dataDir}\n`);
    const report = await bringUpStation({
      dataDir,
      rigConfigFile: args.values['rig-config'] as string | undefined,
      holdSeconds,
      signal: io.signal,
      log: (line) => {
        if (!json) io.out(`  ${line}\n`);
      },
    });
    if (json) io.out(`${JSON.stringify(report, null, 2)}\n`);
    else io.out("Station is up. The station API and operator UI are not built yet; run 'tandem --help' for the commands.\n");
  },
};

export const commands: CliCommand[] = [station];
