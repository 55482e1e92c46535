/**
 * Cell I/O over OPC UA, by hand:
 *   tandem cell-io emulate-plc   a stand-in cell PLC (a real node-opcua server) with interlocks on cue
 *   tandem cell-io probe         connect to the cell PLC of a config, print its interlocks, optionally set the tower light
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError, intOption, type CliCommand, type CliIo } from '../command.js';
import { resolveDataDir } from '../data-dir.js';
import { answerTypedCommands } from './rig.js';
import type { PlcEmulator } from '../../../drivers/cell-io/plc-emulator.js';
import { INTERLOCK_INPUTS, type InterlockInput } from '../../../drivers/cell-io/cell-io-config.js';
import type { StationState } from '../../../drivers/cell-io/station-state.js';
// node-opcua takes seconds to load: only the commands that talk OPC UA load it (dynamic imports below).

function dataDirOf(args: { values: Record<string, unknown> }, io: CliIo): string {
  return resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd);
}

const INPUT_WORD: Record<string, InterlockInput> = {
  door: 'doorClosed',
  curtain: 'lightCurtainClear',
  estop: 'estopOk',
};

/** One command typed into `cell-io emulate-plc`; returns what to print. */
export async function plcCommand(plc: PlcEmulator, line: string): Promise<string> {
  const [word, state] = line.split(/\s+/);
  if (word === '') return '';
  const input = Object.hasOwn(INPUT_WORD, word) ? INPUT_WORD[word] : undefined;
  if (input) {
    const own = (o: Record<string, boolean>, k: string | undefined): boolean | undefined =>
      k !== undefined && Object.hasOwn(o, k) ? o[k] : undefined;
    const safe = own({ closed: true, clear: true, release: true, ok: true }, state);
    const unsafe = own({ open: false, broken: false, press: false }, state);
    if (state === 'bad') {
      plc.setInputBad(input);
      return `${word} reports BadDeviceFailure`;
    }
    if (safe === undefined && unsafe === undefined)
      throw new Error(`${word} needs open|closed (door), broken|clear (curtain), press|release (estop), or bad.`);
    plc.setInput(input, safe ?? false);
    return `${word} ${state}`;
  }
  switch (word) {
    case 'stall':
      plc.stall();
      return 'heartbeat frozen (the PLC program stalled)';
    case 'resume':
      plc.resume();
      return 'heartbeat running';
    case 'drop':
      await plc.drop();
      return 'connections cut; new ones refused until restore';
    case 'restore':
      await plc.restore();
      return 'accepting connections';
    case 'status':
      return `${INTERLOCK_INPUTS.map((i) => `${i}=${plc.input(i)}`).join(' ')}; tower ${JSON.stringify(plc.towerLight())}`;
    default:
      throw new Error(
        `Unknown command '${word}'. Try: door open|closed, curtain broken|clear, estop press|release, door bad, stall, resume, drop, restore, status.`,
      );
  }
}

const emulatePlc: CliCommand = {
  path: ['cell-io', 'emulate-plc'],
  summary: 'run a stand-in cell PLC (a real OPC UA server) with interlocks and a tower light, on cue from stdin',
  help: `Usage: tandem cell-io emulate-plc [--port P] [--config-out FILE] [--heartbeat-ms N]

Serves the nodes of a cell PLC program over OPC UA on 127.0.0.1:P (default 4840; 0 = any free
port): Cell.EStopOk, Cell.DoorClosed, Cell.LightCurtainClear (Boolean, true = safe),
Cell.Heartbeat (a counter every --heartbeat-ms, default 100) and Cell.TowerLight.Red/Amber/Green
(writable). --config-out writes the cell I/O config that points at it, for
'tandem rig rollout --cell-io FILE'. Certificates live in <data dir>/cell-io-pki.

While it runs, type: door open|closed, curtain broken|clear, estop press|release, door bad (a bad
status), stall / resume (the heartbeat freezes), drop / restore (connections cut), status.
Ctrl-C stops it.`,
  options: { port: { type: 'string' }, 'config-out': { type: 'string' }, 'heartbeat-ms': { type: 'string' } },
  async run(args, io) {
    const port = intOption(args, 'port', 4840, 0, 65535);
    const heartbeatMs = intOption(args, 'heartbeat-ms', 100, 0, 10_000);
    const pkiDir = join(dataDirOf(args, io), 'cell-io-pki');
    mkdirSync(pkiDir, { recursive: true });
    let plc: PlcEmulator;
    try {
      const { PlcEmulator } = await import('../../../drivers/cell-io/plc-emulator.js');
      plc = await PlcEmulator.start({ port, pkiDir, heartbeatMs });
    } catch (e) {
      throw new UserError(`The PLC emulator could not listen on port ${port}: ${(e as Error).message}`);
    }
    try {
      if (typeof args.values['config-out'] === 'string') {
        const file = resolve(io.cwd, args.values['config-out']);
        writeFileSync(file, `${JSON.stringify(plc.config(), null, 2)}\n`);
        io.out(`Wrote the cell I/O config for it to ${file}.\n`);
      }
      io.out(`PLC emulator listening at ${plc.endpointUrl}; type 'door open' to open the door, Ctrl-C to stop.\n`);
      await answerTypedCommands(io, (line) => plcCommand(plc, line));
    } finally {
      await plc.stop();
    }
    io.out('Stopped the PLC emulator.\n');
    return 0;
  },
};

const probe: CliCommand = {
  path: ['cell-io', 'probe'],
  summary: 'connect to the cell PLC of a cell I/O config and print its interlocks (and set the tower light)',
  help: `Usage: tandem cell-io probe --config FILE [--tower idle|running|stopped] [--json]

Connects as 'rig rollout --cell-io' does (security, certificates in <data dir>/cell-io-pki),
waits for every interlock input's first value, and prints each input, whether the interlock is
open and why, and what the PLC granted (keep-alive, sampling intervals). --tower sets the tower
light as the station would: idle = green, running = amber, stopped = red.
Exit codes: 0 closed (safe to move), 1 open, 2 bad config or PLC unreachable.`,
  options: { config: { type: 'string' }, tower: { type: 'string' } },
  async run(args, io) {
    if (typeof args.values.config !== 'string')
      throw new UserError('cell-io probe needs --config FILE (the cell I/O config).');
    const towerWord = args.values.tower;
    const tower: Partial<StationState> | undefined =
      towerWord === undefined
        ? undefined
        : { idle: { rolloutPhase: 'idle' }, running: { rolloutPhase: 'running' }, stopped: { rigStatus: 'estopped' } }[
            String(towerWord)
          ];
    if (towerWord !== undefined && !tower)
      throw new UserError(`--tower must be idle, running or stopped, not '${String(towerWord)}'.`);
    const { openCellIo } = await import('../cell-io.js');
    const cellIo = await openCellIo(resolve(io.cwd, args.values.config), {
      dataDir: dataDirOf(args, io),
      controlHz: 1,
      log: (l) => io.err(`${l}\n`),
    });
    try {
      // Through the station state, as in a rollout: the tower light driver writes it (close() waits).
      if (tower) cellIo.board.update(tower);
      const reading = cellIo.plc.current();
      const out = {
        endpointUrl: cellIo.plc.endpointUrl,
        open: reading.open,
        reason: reading.reason ?? null,
        inputs: cellIo.plc.inputsNow(),
        granted: cellIo.plc.granted(),
      };
      if (args.values.json) io.out(`${JSON.stringify(out)}\n`);
      else {
        io.out(
          `${out.endpointUrl}: interlock ${reading.open ? `OPEN — ${reading.reason ?? ''}` : 'closed (safe to move)'}\n` +
            INTERLOCK_INPUTS.map(
              (i) => `  ${i.padEnd(18)} ${String(out.inputs[i].value)} (${out.inputs[i].status})`,
            ).join('\n') +
            `\n  keep-alive ${out.granted.keepAliveMs} ms; sampling ${out.granted.samplingIntervalsMs.join(', ')} ms\n`,
        );
      }
      return reading.open ? 1 : 0;
    } finally {
      await cellIo.close();
    }
  },
};

export const commands: CliCommand[] = [emulatePlc, probe];
