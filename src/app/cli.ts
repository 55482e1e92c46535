import { parseArgs } from 'node:util';
import { UserError, type CliCommand, type CliIo } from './command.js';
/**
 * The command modules by the words their commands start with. A module is imported only when a
 * command under its prefix is run: the heavy ones pull in Rapier, node-opcua or playwright, and a
 * `tandem layouts` or `tandem rig hold` should not pay for them (the tests and the station's
 * scripts start the CLI hundreds of times). `tandem --help` imports them all.
 */
type CommandModule = { readonly commands: readonly CliCommand[] };
const COMMAND_MODULES: readonly { readonly prefix: readonly string[]; readonly load: () => Promise<CommandModule> }[] =
  [
    { prefix: ['station'], load: () => import('./commands/station.js') },
    { prefix: ['layouts'], load: () => import('./commands/layouts.js') },
    { prefix: ['score'], load: () => import('./commands/score.js') },
    { prefix: ['stats'], load: () => import('./commands/stats.js') },
    { prefix: ['report'], load: () => import('./commands/report.js') },
    { prefix: ['diagnose'], load: () => import('./commands/diagnose.js') },
    { prefix: ['sim'], load: () => import('./commands/sim.js') },
    { prefix: ['sim', 'worker'], load: () => import('./commands/sim-queue.js') },
    { prefix: ['sim', 'export-mjcf'], load: () => import('./commands/sim-export.js') },
    { prefix: ['sim', 'serve-env'], load: () => import('./commands/sim-env.js') },
    { prefix: ['sim', 'env-worker'], load: () => import('./commands/sim-env-worker.js') },
    { prefix: ['sim', 'generate'], load: () => import('./commands/sim-generate.js') },
    { prefix: ['rig', 'urdf'], load: () => import('./commands/rig-model.js') },
    { prefix: ['rig'], load: () => import('./commands/rig.js') },
    { prefix: ['rig', 'rollout'], load: () => import('./commands/rig-rollout.js') },
    { prefix: ['cell'], load: () => import('./commands/cell.js') },
    { prefix: ['sysid'], load: () => import('./commands/sysid.js') },
    { prefix: ['cell-io'], load: () => import('./commands/cell-io.js') },
    { prefix: ['record'], load: () => import('./commands/record.js') },
    { prefix: ['session'], load: () => import('./commands/session.js') },
    { prefix: ['teleop'], load: () => import('./commands/teleop.js') },
    { prefix: ['leader'], load: () => import('./commands/leader.js') },
    { prefix: ['policy'], load: () => import('./commands/policy.js') },
    { prefix: ['projector'], load: () => import('./commands/projector.js') },
  ];

/** The commands of the modules `which` selects, in the order above. */
export async function loadCommands(which: (prefix: readonly string[]) => boolean = () => true): Promise<CliCommand[]> {
  const listed = COMMAND_MODULES.filter((m) => which(m.prefix));
  const modules = await Promise.all(
    listed.map(async (m) => ({ prefix: m.prefix, commands: (await m.load()).commands })),
  );
  for (const m of modules) {
    // A command outside its module's prefix would be unreachable: say so to the developer at once.
    const stray = m.commands.find((c) => !m.prefix.every((w, i) => c.path[i] === w));
    if (stray)
      throw new Error(`command 'tandem ${stray.path.join(' ')}' is in a module listed under '${m.prefix.join(' ')}'`);
  }
  return modules.flatMap((m) => m.commands);
}

const GLOBAL_HELP = `  --data DIR   station data directory (default: $TANDEM_DATA, else a per-user folder)
  --json       machine-readable output where the command offers it
  -h, --help   show help for a command`;

function overview(all: readonly CliCommand[]): string {
  const width = Math.max(...all.map((c) => c.path.join(' ').length));
  const lines = all.map((c) => `  tandem ${c.path.join(' ').padEnd(width)}  ${c.summary}`);
  return `tandem — station software for the two-arm YAM rig\n\nUsage: tandem <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nOptions for every command:\n${GLOBAL_HELP}\n`;
}

function findCommand(
  candidates: readonly CliCommand[],
  argv: readonly string[],
): { command: CliCommand; rest: string[] } | undefined {
  let best: CliCommand | undefined;
  for (const c of candidates) {
    if (c.path.every((w, i) => argv[i] === w) && (!best || c.path.length > best.path.length)) best = c;
  }
  return best ? { command: best, rest: argv.slice(best.path.length) } : undefined;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(overview(await loadCommands()));
    return 0;
  }
  const found = findCommand(await loadCommands((prefix) => prefix.every((w, i) => argv[i] === w)), argv);
  if (!found) {
    const group = await loadCommands((prefix) => prefix[0] === argv[0]);
    if (group.length > 0) {
      io.err(
        `'${argv.join(' ')}' is not a tandem command. Commands under '${argv[0]}':\n${group.map((c) => `  tandem ${c.path.join(' ')}  ${c.summary}`).join('\n')}\n`,
      );
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
      options: {
        data: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...command.options,
      },
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
    if (
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
      code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ||
      code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
    ) {
      io.err(`${(e as Error).message}. Run 'tandem ${command.path.join(' ')} --help' to see the usage.\n`);
      return 2;
    }
    // An internal error: say so plainly, keep the detail for the developer behind TANDEM_DEBUG.
    io.err(`tandem ${command.path.join(' ')} failed unexpectedly: ${(e as Error).message ?? String(e)}\n`);
    if (io.env.TANDEM_DEBUG) io.err(`${(e as Error).stack ?? ''}\n`);
    return 1;
  }
}

const isMain =
  process.argv[1] !== undefined && /(?:bin[\\/]tandem(?:\.js)?|src[\\/]app[\\/]cli\.ts)$/.test(process.argv[1]);
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
