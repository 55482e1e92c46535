import { parseArgs } from 'node:util';
import { UserError, type CliCommand, type CliIo } from './command.js';
import { commands as layoutCommands } from './commands/layouts.js';
import { commands as scoreCommands } from './commands/score.js';
import { commands as statsCommands } from './commands/stats.js';
import { commands as stationCommands } from './commands/station.js';
import { commands as simCommands } from './commands/sim.js';
import { commands as simQueueCommands } from './commands/sim-queue.js';
import { commands as simExportCommands } from './commands/sim-export.js';
import { commands as simEnvCommands } from './commands/sim-env.js';
import { commands as simGenerateCommands } from './commands/sim-generate.js';
import { commands as rigCommands } from './commands/rig.js';
import { commands as rigRolloutCommands } from './commands/rig-rollout.js';
import { commands as rigModelCommands } from './commands/rig-model.js';
import { commands as policyCommands } from './commands/policy.js';
import { commands as cellCommands } from './commands/cell.js';
import { commands as sysidCommands } from './commands/sysid.js';
import { commands as recordCommands } from './commands/record.js';
import { commands as projectorCommands } from './commands/projector.js';
import { commands as cellIoCommands } from './commands/cell-io.js';
import { commands as reportCommands } from './commands/report.js';
import { commands as diagnoseCommands } from './commands/diagnose.js';
import { commands as sessionCommands } from './commands/session.js';
import { commands as teleopCommands } from './commands/teleop.js';

export const ALL_COMMANDS: readonly CliCommand[] = [
  ...stationCommands,
  ...layoutCommands,
  ...scoreCommands,
  ...statsCommands,
  ...reportCommands,
  ...diagnoseCommands,
  ...simCommands,
  ...simQueueCommands,
  ...simExportCommands,
  ...simEnvCommands,
  ...simGenerateCommands,
  ...rigModelCommands,
  ...rigCommands,
  ...rigRolloutCommands,
  ...cellCommands,
  ...sysidCommands,
  ...cellIoCommands,
  ...recordCommands,
  ...sessionCommands,
  ...teleopCommands,
  ...policyCommands,
  ...projectorCommands,
];

const GLOBAL_HELP = `  --data DIR   station data directory (default: $TANDEM_DATA, else a per-user folder)
  --json       machine-readable output where the command offers it
  -h, --help   show help for a command`;

function overview(): string {
  const width = Math.max(...ALL_COMMANDS.map((c) => c.path.join(' ').length));
  const lines = ALL_COMMANDS.map((c) => `  tandem ${c.path.join(' ').padEnd(width)}  ${c.summary}`);
  return `tandem — station software for the two-arm YAM rig\n\nUsage: tandem <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nOptions for every command:\n${GLOBAL_HELP}\n`;
}

function findCommand(argv: readonly string[]): { command: CliCommand; rest: string[] } | undefined {
  let best: CliCommand | undefined;
  for (const c of ALL_COMMANDS) {
    if (c.path.every((w, i) => argv[i] === w) && (!best || c.path.length > best.path.length)) best = c;
  }
  return best ? { command: best, rest: argv.slice(best.path.length) } : undefined;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(overview());
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = ALL_COMMANDS.filter((c) => c.path[0] === argv[0]);
    if (group.length > 0) {
      io.err(`'${argv.join(' ')}' is not a tandem command. Commands under '${argv[0]}':\n${group.map((c) => `  tandem ${c.path.join(' ')}  ${c.summary}`).join('\n')}\n`);
    } else {
      io.err(`'${argv[0]}' is not a tandem command. Run 'tandem --help' to list the commands.\n`);
    }
    return 2;
  }
  const { command, rest } = found;
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`${command.summary}\n\n${command.help.trimEnd()}\n\nOptions for every command:\n${GLOBAL_HELP}\n`);
    return 0;
  }
  try {
    const parsed = parseArgs({
      args: [...rest],
      options: { data: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, ...command.options },
      allowPositionals: true,
      strict: true,
    });
    const [min, max] = command.positionals ?? [0, 0];
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
      throw new UserError(
        parsed.positionals.length < min
          ? `'tandem ${command.path.join(' ')}' needs ${min === max ? min : `at least ${min}`} argument${min === 1 ? '' : 's'}. Run it with --help to see the usage.`
          : `'tandem ${command.path.join(' ')}' does not take '${parsed.positionals.slice(max).join(' ')}'. Run it with --help to see the usage.`,
      );
    }
    const code = await command.run({ values: parsed.values, positionals: parsed.positionals }, io);
    return code ?? 0;
  } catch (e) {
    if (e instanceof UserError) {
      io.err(`${e.message}\n`);
      return e.exitCode;
    }
    const code = (e as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      io.err(`${(e as Error).message}. Run 'tandem ${command.path.join(' ')} --help' to see the usage.\n`);
      return 2;
    }
    // An internal error: say so plainly, keep the detail for the developer behind TANDEM_DEBUG.
    io.err(`tandem ${command.path.join(' ')} failed unexpectedly: ${(e as Error).message ?? String(e)}\n`);
    if (io.env.TANDEM_DEBUG) io.err(`${(e as Error).stack ?? ''}\n`);
    return 1;
  }
}

const isMain = process.argv[1] !== undefined && /(?:bin[\\/]tandem(?:\.js)?|src[\\/]app[\\/]cli\.ts)$/.test(process.argv[1]);
if (isMain) {
  const controller = new AbortController();
  let interrupts = 0;
  process.on('SIGINT', () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130);
    process.stderr.write('\nStopping after the work in flight; press Ctrl-C again to quit at once.\n');
    controller.abort();
  });
  // A reader that stops early (`tandem record inspect F | head`) is not an error: stop printing, and
  // abort long work as Ctrl-C would, so it still ends cleanly and keeps what finished.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    controller.abort();
  });
  // A service manager's stop: the same clean shutdown as Ctrl-C (the station damps the rig, closes the store).
  process.on('SIGTERM', () => controller.abort());
  const io: CliIo = {
    out: (t) => void (process.stdout.writable && process.stdout.write(t)),
    err: (t) => void process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
  const code = await runCli(process.argv.slice(2), io);
  process.exitCode = code;
}
