import type { CliCommand } from '../command.js';
import { resolveDataDir } from '../data-dir.js';

const station: CliCommand = {
  path: ['station'],
  summary: 'start the station (embedded default: emulated rig + sim twin + SQLite)',
  help: 'Usage: tandem station [--data DIR]',
  options: {},
  async run(args, io) {
    const dataDir = resolveDataDir(args.values.data as string | undefined, io.env, io.cwd);
    io.out(
      [
        'tandem station',
        `  data directory: ${dataDir}`,
        '  The station API and operator UI are not built yet; today the station offers its command line:',
        "  run 'tandem --help' (or 'npm run tandem -- --help') to list the commands.",
        '',
      ].join('\n'),
    );
  },
};

export const commands: CliCommand[] = [station];
