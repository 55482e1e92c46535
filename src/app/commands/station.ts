import { resolve } from 'node:path';
import { numberOption, type CliCommand, type ParsedCommandArgs } from '../command.js';
import { resolveDataDir } from '../data-dir.js';
import { UserError } from '../command.js';
import { bringUpStation } from '../station.js';
import { CELL_PRESET, STATION_CONFIG_HELP, STATION_CONFIG_OPTIONS, stationConfigFromArgs } from '../station-config.js';
import { serveStation } from '../station-serve.js';
import { findElectron, noShellLine, runElectronShell, type CellParts } from '../electron-shell.js';
import { foxgloveEnv, foxgloveListenOf } from '../foxglove-options.js';

/** The station's port when PORT is not set. */
export const DEFAULT_STATION_PORT = 8420;

function portOf(env: NodeJS.ProcessEnv): number {
  const text = env.PORT;
  if (text === undefined || text === '') return DEFAULT_STATION_PORT;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UserError(`PORT must be a port number from 0 to 65535 (0: any free port), not '${text}'.`);
  return port;
}

/** The cell's parts a served station takes (files resolved here, so the Electron shell gets absolute paths). */
function stationCellOptions(args: ParsedCommandArgs, cwd: string): CellParts {
  const v = args.values;
  const file = (name: string): string | undefined =>
    typeof v[name] === 'string' ? resolve(cwd, v[name] as string) : undefined;
  const projector = file('projector-calibration');
  const cellIo = file('cell-io');
  return {
    ...(projector ? { projectorCalibrationFile: projector } : {}),
    ...(typeof v.pjlink === 'string' ? { pjlink: v.pjlink } : {}),
    ...(cellIo ? { cellIoFile: cellIo } : {}),
  };
}

const station: CliCommand = {
  path: ['station'],
  summary:
    'serve the station: API and operator UI on loopback (embedded default rig: the emulated cell); --check reports what runs and exits',
  help: `Usage: tandem station [--data DIR] [--station-config FILE | --rig-config FILE] [--projector-calibration FILE [--pjlink HOST[:PORT]]] [--cell-io FILE]
                      [--foxglove-port N [--foxglove-host ADDR --foxglove-allow-remote]]
       tandem station --check [--data DIR] [--station-config FILE | --rig-config FILE] [--hold-seconds S] [--json]

Serves the station until Ctrl-C (or SIGTERM), in the Electron shell where Electron is installed
(operator window, projector window; TANDEM_SHELL=browser skips it), else for a browser: the store in the data directory, the configured rig
(configured, not powered, until the operator holds it or runs a rollout), the station API and the
operator UI on 127.0.0.1:$PORT (default ${DEFAULT_STATION_PORT}; PORT=0 takes any free port). Prints one line
with the address to open; it carries this launch's token, without which the station answers 401.
On the way out the rig is damped and the store closed.

With --check: opens the store in the data directory, creates the configured rig (default: the YAM on the
emulated cell in this process — arms, a bottles layout on the table, a hidden reality gap, the
real byte protocol; no hardware), configures and activates it, holds its pose
under the ${'250'} Hz control loop for S seconds (default 2), damps it, checks the sim twin, and
says which parts this machine cannot run (ROS 2, the Electron shell).

  --foxglove-port N   also serve the live rig state to Foxglove (WebSocket, ROS 2 CDR: joint states
                      per arm, /tf) on 127.0.0.1:N (0: any free port; env TANDEM_FOXGLOVE_PORT);
                      off unless asked. Read only, no token.
  --foxglove-host ADDR bind the live view elsewhere than 127.0.0.1: refused unless
                      --foxglove-allow-remote too (anyone on that network can then read it)
${STATION_CONFIG_HELP}
                      e.g. a rig {"type": "yam-can", "transport": "slcan",
                      "ports": {"left": "/dev/ttyACM0", "right": "/dev/ttyACM1"}}
  --projector-calibration FILE  sessions project each layout's footprints with this calibration
                      ('tandem projector calibrate') and black before every rollout: in the Electron
                      shell's projector window, or a browser full screen on the projector's display at
                      /projector (the address printed, with /projector in place of /)
  --pjlink HOST[:PORT] AV-mute the projector over PJLink for every blank (password: $TANDEM_PJLINK_PASSWORD)
  --cell-io FILE      the cell PLC's e-stop and interlocks over OPC UA (docs/cell-io.md): an interlock that
                      opens stops the arms (every rollout, session and teleop take), a session starts no
                      rollout while one is open, and the tower light follows the station
  --hold-seconds S    how long to hold the pose (0.1 to 60, default 2)`,
  options: {
    ...STATION_CONFIG_OPTIONS,
    'hold-seconds': { type: 'string' },
    check: { type: 'boolean' },
    'projector-calibration': { type: 'string' },
    pjlink: { type: 'string' },
    'cell-io': { type: 'string' },
    'foxglove-port': { type: 'string' },
    'foxglove-host': { type: 'string' },
    'foxglove-allow-remote': { type: 'boolean' },
  },
  async run(args, io) {
    const dataDir = resolveDataDir(args.values.data as string | undefined, io.env, io.cwd);
    if (args.values.check !== true) {
      const rigConfigFile = args.values['rig-config'] as string | undefined;
      const stationConfigFile = args.values['station-config'] as string | undefined;
      // Read and checked here: a bad station config is one sentence before anything starts.
      const stationConfig = await stationConfigFromArgs(args.values, io.cwd);
      const port = portOf(io.env);
      const cell = stationCellOptions(args, io.cwd);
      const foxglove = foxgloveListenOf(
        {
          port: args.values['foxglove-port'] as string | undefined,
          host: args.values['foxglove-host'] as string | undefined,
          allowRemote: args.values['foxglove-allow-remote'] === true,
        },
        io.env,
      );
      // The desktop shell where Electron is installed; the same UI on loopback where it is not.
      const electron = findElectron(io.env);
      if ('path' in electron) {
        await runElectronShell({
          electronPath: electron.path,
          dataDir,
          rigConfigFile: rigConfigFile && resolve(io.cwd, rigConfigFile),
          stationConfigFile:
            stationConfigFile &&
            (stationConfigFile === CELL_PRESET ? stationConfigFile : resolve(io.cwd, stationConfigFile)),
          ...cell,
          port,
          env: { ...io.env, ...foxgloveEnv(foxglove) },
          signal: io.signal,
        });
        return;
      }
      // Said when the shell is missing, not when the operator asked for the browser (TANDEM_SHELL=browser).
      if (io.env.TANDEM_SHELL !== 'browser') io.out(`${noShellLine(electron)}\n`);
      await serveStation({
        dataDir,
        station: stationConfig,
        ...cell,
        port,
        cwd: io.cwd,
        env: io.env,
        signal: io.signal,
        log: (line) => io.out(`${line}\n`),
        ...(foxglove ? { foxglove } : {}),
      });
      return;
    }
    const holdSeconds = numberOption(args, 'hold-seconds', 2, 0.1, 60);
    const json = Boolean(args.values.json);
    if (!json) io.out(`tandem station — data in ${dataDir}\n`);
    const report = await bringUpStation({
      dataDir,
      station: await stationConfigFromArgs(args.values, io.cwd),
      holdSeconds,
      signal: io.signal,
      log: (line) => {
        if (!json) io.out(`  ${line}\n`);
      },
    });
    if (json) io.out(`${JSON.stringify(report, null, 2)}\n`);
    else io.out("Station checked. Run 'tandem station' (npm start) to serve the operator UI.\n");
  },
};

export const commands: CliCommand[] = [station];
