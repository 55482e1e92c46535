/**
 * Bring-up commands for the real rig's CAN adapters:
 *   tandem rig probe    which motors answer, their range registers, watchdog and status
 *   tandem rig hold     enable one arm, hold its pose at a fixed rate, disable; prints rate and jitter
 *   tandem rig emulate  a YAM arm emulator on a socat pty, for driving by hand
 *   tandem rig set-zero     make the current pose the zero of some motors (after a wrong-zero refusal)
 *   tandem rig calibrate-gripper  stall-based gripper limits, stored as a calibration record
 */
import {
  UserError,
  intOption,
  numberOption,
  requireString,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import { ARM_SIDES, RigError, type ArmSide, type RigCommand, type SafetyEvent } from '../../rig/contract.js';
import { RealtimeClock } from '../../rig/clocks.js';
import { ControlLoop, MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { CAN_TRANSPORTS, type CanTransport } from '../../../drivers/can/bus.js';
import { DEFAULT_BAUD, SerialCanBus } from '../../../drivers/can/serial-can-bus.js';
import { probeMotors, type ProbedMotor } from '../../../drivers/yam/probe.js';
import { YamCanRig } from '../../../drivers/yam/yam-can-rig.js';
import { createThreadedYamCanRig } from '../../../drivers/yam/register.js';
import type { RigThreadProxy } from '../../rig/rig-thread-proxy.js';
import { PtyEmulator } from '../../../drivers/emulators/pty.js';
import { FEEDBACK_ID_OFFSET, specialFrame, statusName } from '../../../drivers/damiao/protocol.js';
import { createInterface } from 'node:readline';
import { resolveDataDir } from '../data-dir.js';
import { openStationStore } from '../station-store.js';

export function transportOption(args: ParsedCommandArgs): CanTransport {
  const t = requireString(args, 'transport');
  if (!(CAN_TRANSPORTS as readonly string[]).includes(t))
    throw new UserError(`--transport must be one of ${CAN_TRANSPORTS.join(', ')}, not '${t}'.`);
  return t as CanTransport;
}

function armOption(args: ParsedCommandArgs): ArmSide {
  const a = requireString(args, 'arm');
  if (!(ARM_SIDES as readonly string[]).includes(a)) throw new UserError(`--arm must be left or right, not '${a}'.`);
  return a as ArmSide;
}

function busFor(args: ParsedCommandArgs): SerialCanBus {
  const transport = transportOption(args);
  const path = requireString(args, 'port');
  const baudRate = intOption(args, 'baud', DEFAULT_BAUD[transport], 9600, 12_000_000);
  // Bring-up commands do not reconnect: an unplug ends them with a message.
  return new SerialCanBus({ transport, path, baudRate, reconnectIntervalMs: 0 });
}

async function openBus(bus: SerialCanBus): Promise<void> {
  try {
    await bus.open();
  } catch (e) {
    throw new UserError((e as Error).message);
  }
}

const busOptions = {
  transport: { type: 'string' },
  port: { type: 'string' },
  baud: { type: 'string' },
} as const;

const BUS_HELP = `  --transport slcan|damiao   the adapter's framing: SLCAN (CANable, slcan firmware) or the Damiao USB-CAN
  --port PATH                the adapter's serial device, e.g. /dev/ttyACM0 (or a pty from 'tandem rig emulate')
  --baud B                   serial baud rate (default 115200 for slcan, 921600 for damiao)`;

const fmt = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '?');

function probeTable(motors: readonly ProbedMotor[]): string {
  const rows = motors.map((m) => [
    `0x${m.id.toString(16).padStart(2, '0')}`,
    m.matchingModels.join('/') || 'no catalogue match',
    `${fmt(m.pMaxRad, 1)} / ${fmt(m.vMaxRadS, 1)} / ${fmt(m.tMaxNm, 1)}`,
    Number.isFinite(m.watchdogMs) ? (m.watchdogMs === 0 ? 'OFF' : `${m.watchdogMs} ms`) : '?',
    fmt(m.positionRad),
    `${fmt(m.mosfetTempC, 0)}/${fmt(m.rotorTempC, 0)} °C`,
    m.statusText,
  ]);
  const head = ['ID', 'model', 'PMAX/VMAX/TMAX', 'watchdog', 'pos rad', 'temp', 'status'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [head, ...rows]
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const probe: CliCommand = {
  path: ['rig', 'probe'],
  summary: 'List the Damiao motors that answer on a CAN adapter, with their model registers and status',
  help: `Usage: tandem rig probe --transport slcan|damiao --port PATH [--baud B] [--ids 1-7] [--json]

Asks each motor ID for its range registers (21 PMAX, 22 VMAX, 23 TMAX), watchdog (9) and
firmware (14), then disables it to read its status. Never enables a motor.
Exits non-zero, with the reason, when no motor answers or one reports a fault.

${BUS_HELP}
  --ids A-B                  motor IDs to ask (default 1-7: YAM joints 1-6 and the gripper)`,
  options: { ...busOptions, ids: { type: 'string' } },
  async run(args, io) {
    const ids = idsOption(args, '1-7');
    const bus = busFor(args);
    await openBus(bus);
    try {
      const result = await probeMotors(bus, ids);
      if (args.values.json)
        io.out(`${JSON.stringify({ port: bus.description, ...result, bus: bus.stats }, null, 2)}\n`);
      else {
        io.out(
          `${bus.description}: ${result.motors.length} motor${result.motors.length === 1 ? '' : 's'} answered${result.silent.length ? `; no answer from ID ${result.silent.join(', ')}` : ''}.\n`,
        );
        if (result.motors.length) io.out(`${probeTable(result.motors)}\n`);
        if (bus.stats.garbageBytes > 0 || bus.stats.rejectedFrames > 0) {
          io.out(
            `Dropped ${bus.stats.garbageBytes} bytes that were not frames (${bus.stats.rejectedFrames} frame-shaped but impossible: wrong DLC or ID, or cut short).\n`,
          );
        }
      }
      if (result.motors.length === 0) {
        throw new UserError(
          `No motor answered on the ${bus.description}. Check motor power, the CAN cable and its 120 Ω termination, and that --transport matches the adapter.`,
          1,
        );
      }
      const faulted = result.motors.filter((x) => x.fault);
      if (faulted.length > 0) {
        throw new UserError(
          faulted.map((x) => `Motor 0x${x.id.toString(16).padStart(2, '0')} reports ${x.statusText}.`).join(' '),
          1,
        );
      }
      const off = result.motors.filter((x) => x.watchdogMs === 0);
      if (off.length > 0)
        io.out(
          `Warning: motor ${off.map((x) => x.id).join(', ')} has its watchdog (register 9) off; 'tandem rig hold' turns it on before enabling.\n`,
        );
    } finally {
      await bus.close();
    }
  },
};

function describeEvents(events: readonly SafetyEvent[]): string[] {
  return events
    .filter(
      (e) =>
        e.kind === 'fault-hold' || e.kind === 'estop' || e.kind === 'watchdog-damp' || e.kind === 'activate-refused',
    )
    .map((e) => e.message);
}

const hold: CliCommand = {
  path: ['rig', 'hold'],
  summary: 'Enable one arm, hold its current pose at a fixed rate, then disable; prints loop rate and jitter',
  help: `Usage: tandem rig hold --transport slcan|damiao --port PATH --arm left|right --seconds S [--rate HZ] [--json]

Checks each motor's range registers against the YAM model (joints 1-3 DM4340, 4-6 DM4310,
gripper DM4310) and refuses to run on a mismatch or a joint outside its limits (wrong zero).
Then enables the arm, holds the pose it found for S seconds with the safety supervisor on,
damps and disables. Any fault (a motor stops answering, a motor fault, the adapter unplugged)
ends in a safe hold and a non-zero exit with the reason. Ctrl-C stops early and cleanly.

${BUS_HELP}
  --arm left|right           which arm this bus drives
  --seconds S                how long to hold (0.1 to 3600)
  --rate HZ                  control rate (default 250, up to ${MAX_CONTROL_RATE_HZ})
  --reply-deadline-ms MS     a motor silent this long (and 3 cycles running) is a fault (default 100)`,
  options: {
    ...busOptions,
    arm: { type: 'string' },
    seconds: { type: 'string' },
    rate: { type: 'string' },
    'reply-deadline-ms': { type: 'string' },
  },
  async run(args, io) {
    const side = armOption(args);
    const seconds = numberOption(args, 'seconds', undefined, 0.1, 3600);
    const rateHz = intOption(args, 'rate', 250, 1, MAX_CONTROL_RATE_HZ);
    const replyDeadlineMs = intOption(args, 'reply-deadline-ms', 100, 5, 350);
    const transport = transportOption(args);
    const port = requireString(args, 'port');
    const baudRate = intOption(args, 'baud', DEFAULT_BAUD[transport], 9600, 12_000_000);
    const clock = new RealtimeClock();
    // The motors' loop runs in the rig thread: a busy or stalled main thread cannot starve them.
    // Bring-up commands do not reconnect: an unplug ends them with a message.
    let rig: RigThreadProxy;
    try {
      rig = createThreadedYamCanRig(
        { type: 'yam-can', transport, ports: { [side]: port }, baudRate, replyDeadlineMs },
        { clock },
        { rateHz, reconnectIntervalMs: 0 },
      );
    } catch (e) {
      if (e instanceof RigError) throw new UserError(e.message);
      throw e;
    }
    const description = `${transport === 'slcan' ? 'SLCAN adapter' : 'Damiao USB-CAN adapter'} on ${port}`;
    let activated = false;
    try {
      try {
        await rig.configure();
        await rig.activate();
        activated = true;
      } catch (e) {
        if (e instanceof RigError) throw new UserError(e.message, 1);
        throw e;
      }
      const holdPose: RigCommand = { position: Float64Array.from(rig.read().position) };
      let faultText: string | undefined;
      const loop = new ControlLoop({
        rig,
        clock,
        rateHz,
        source: (state) => {
          if (state.faults.length > 0 && faultText === undefined) {
            faultText = state.faults.map((f) => f.message).join(' ');
            loop.stop();
          }
          return holdPose;
        },
      });
      io.out(`Holding the ${side} arm on the ${description} at ${rateHz} Hz for ${seconds} s…\n`);
      await loop.run({ untilS: clock.nowS() + seconds, signal: io.signal });
      // The motors' own loop (in the rig thread) is what the report is about.
      const stats = await rig.loopStats().catch(() => undefined);
      const diag = (
        (await rig.diagnostics().catch(() => undefined)) as ReturnType<YamCanRig['diagnostics']> | undefined
      )?.[0];
      const events = rig.takeSafetyEvents();
      await rig.deactivate();
      activated = false;
      if (!stats || !diag) {
        throw new UserError(
          `The hold stopped on a fault: ${
            faultText ??
            rig
              .read()
              .faults.map((f) => f.message)
              .join(' ')
          }`,
          1,
        );
      }
      const report = {
        arm: side,
        port: description,
        rateHz,
        achievedHz: stats.achievedHz,
        cycles: stats.cycles,
        lateCycles: stats.lateCycles,
        overruns: stats.overruns,
        jitterMs: { p50: stats.jitterP50Ms, p99: stats.jitterP99Ms, max: stats.jitterMaxMs },
        watchdogHolds: stats.watchdogHolds,
        longestCommandAgeMs: stats.longestCommandAgeMs,
        missedReplies: diag.missedReplies,
        garbageBytes: diag.bus.garbageBytes,
        rejectedFrames: diag.bus.rejectedFrames,
        implausibleReports: diag.implausibleReports,
        notes: diag.notes,
        fault: faultText ?? null,
      };
      if (args.values.json) io.out(`${JSON.stringify(report, null, 2)}\n`);
      else {
        io.out(
          `Loop: ${stats.cycles} cycles, ${stats.achievedHz.toFixed(1)} Hz achieved (target ${rateHz}); jitter p50 ${stats.jitterP50Ms.toFixed(3)} ms, p99 ${stats.jitterP99Ms.toFixed(3)} ms, max ${stats.jitterMaxMs.toFixed(3)} ms; ` +
            `${stats.lateCycles} late cycles, ${stats.overruns} overruns; ${diag.missedReplies} replies later than one cycle; ` +
            `${stats.watchdogHolds} watchdog holds (commands from this process older than the supervisor's watchdog).\n`,
        );
        io.out(
          `Bus: ${diag.bus.garbageBytes} bytes dropped that were not frames, ${diag.bus.rejectedFrames} impossible frames rejected, ${diag.implausibleReports} motor reports dropped as implausible.\n`,
        );
        for (const n of diag.notes) io.out(`Note: ${n}\n`);
      }
      if (faultText !== undefined) {
        const held = describeEvents(events);
        throw new UserError(
          `The hold stopped on a fault: ${faultText}${held.length ? `\n${held.join('\n')}` : ''}\nThe arm was damped and disabled.`,
          1,
        );
      }
      io.out(`Done: the ${side} arm is damped and disabled.\n`);
    } finally {
      if (activated) await rig.deactivate().catch(() => {});
      await rig.close();
    }
  },
};

const emulate: CliCommand = {
  path: ['rig', 'emulate'],
  summary: 'Run a YAM arm emulator (7 Damiao motors) on a socat pty for driving by hand',
  help: `Usage: tandem rig emulate --transport slcan|damiao --link PATH [--latency-ms MS] [--drop-rate P]

Starts 'socat -d -d pty,raw,echo=0,link=PATH pty,raw,echo=0,link=PATH.emulator' and answers on it
like a CAN adapter with a YAM arm behind it (IDs 1-6 joints, 7 gripper). Point any tool at PATH,
e.g. 'tandem rig probe --transport slcan --port PATH'. Ctrl-C stops it and removes the pty.
Needs socat (Debian: apt-get install socat).

While it runs, type a command and Enter to inject a fault:
  silent ID        motor ID stops answering        answer ID   it answers again
  fault ID HEX     motor ID reports status HEX (8 over-voltage … a over-current … e overload)
  garbage          a burst of bytes that are no frame
  unplug / replug  the adapter disappears / comes back
  latency MS       reply latency                   drop P      fraction of replies dropped
  status           each motor's status and position

  --transport slcan|damiao   which adapter to emulate
  --link PATH                where to put the pty the host opens
  --latency-ms MS            delay before each motor reply (default 0)
  --drop-rate P              fraction of replies to drop, 0 to 1 (default 0)`,
  options: {
    transport: { type: 'string' },
    link: { type: 'string' },
    'latency-ms': { type: 'string' },
    'drop-rate': { type: 'string' },
  },
  async run(args, io: CliIo) {
    const transport = transportOption(args);
    const link = requireString(args, 'link');
    const latency = numberOption(args, 'latency-ms', 0, 0, 1000);
    const drop = numberOption(args, 'drop-rate', 0, 0, 1);
    let emu: PtyEmulator;
    try {
      emu = await PtyEmulator.start({ transport, link, replyLatencyMs: latency });
    } catch (e) {
      throw new UserError((e as Error).message);
    }
    emu.bus.faults.dropProbability = drop;
    io.out(
      `Emulated YAM arm (${transport}) on ${link}. Try: tandem rig probe --transport ${transport} --port ${link}\nPress Ctrl-C to stop.\n`,
    );
    await answerTypedCommands(io, (line) => emulatorCommand(emu, line));
    await emu.stop();
    io.out(`Stopped the emulator; ${emu.bus.framesReceived} frames answered.\n`);
  },
};

/**
 * Reads commands typed on standard input, one a line, and prints each one's answer (or its error)
 * until the command is stopped (Ctrl-C): the console of `rig emulate` and `cell run`.
 */
export async function answerTypedCommands(io: CliIo, answer: (line: string) => Promise<string>): Promise<void> {
  const lines = createInterface({ input: process.stdin, terminal: false });
  lines.on('line', (line) => {
    void answer(line.trim()).then(
      (reply) => reply && io.out(`${reply}\n`),
      (e: Error) => io.err(`${e.message}\n`),
    );
  });
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  lines.close();
}

/** One fault-injection command typed into `tandem rig emulate`; returns what to print. */
export async function emulatorCommand(emu: PtyEmulator, line: string): Promise<string> {
  const [word, a, b] = line.split(/\s+/);
  const motorId = (): number => {
    const id = Number(a);
    if (!emu.bus.motors.has(id)) throw new Error(`There is no motor ${a ?? ''}; the IDs are 1-7.`);
    return id;
  };
  switch (word) {
    case '':
      return '';
    case 'silent':
      emu.bus.faults.silent.add(motorId());
      return `motor ${a} is silent`;
    case 'answer':
      emu.bus.faults.silent.delete(motorId());
      return `motor ${a} answers again`;
    case 'fault': {
      const status = parseInt(b ?? '', 16);
      if (!(status >= 0x8 && status <= 0xe))
        throw new Error('fault needs a status from 8 to e, e.g. "fault 3 a" for over-current.');
      emu.bus.motor(motorId()).injectFault(status, emu.bus.now());
      return `motor ${a} reports ${statusName(status)}`;
    }
    case 'garbage':
      emu.adapter.injectGarbage();
      return 'sent a burst of garbage bytes';
    case 'unplug':
      await emu.unplug();
      return 'adapter unplugged';
    case 'replug':
      await emu.replug();
      return 'adapter plugged back in';
    case 'latency': {
      const ms = Number(a);
      if (!(ms >= 0 && ms <= 1000)) throw new Error('latency needs milliseconds from 0 to 1000.');
      emu.setReplyLatencyMs(ms);
      return `reply latency ${ms} ms`;
    }
    case 'drop': {
      const p = Number(a);
      if (!(p >= 0 && p <= 1)) throw new Error('drop needs a fraction from 0 to 1.');
      emu.bus.faults.dropProbability = p;
      return `dropping ${Math.round(p * 100)}% of replies`;
    }
    case 'status':
      emu.bus.advanceAll();
      return [...emu.bus.motors.values()]
        .map(
          (m) =>
            `motor ${m.id}: ${statusName(m.status)}, ${m.positionRad.toFixed(3)} rad${emu.bus.faults.silent.has(m.id) ? ' (silent)' : ''}`,
        )
        .join('\n');
    default:
      throw new Error(
        `Unknown emulator command '${word}'. Try: silent ID, answer ID, fault ID HEX, garbage, unplug, replug, latency MS, drop P, status.`,
      );
  }
}

function idsOption(args: ParsedCommandArgs, fallback: string): number[] {
  const text = typeof args.values.ids === 'string' ? args.values.ids : fallback;
  const m = /^(\d+)-(\d+)$/.exec(text) ?? /^(\d+)()$/.exec(text);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m && m[2] !== '' ? Number(m[2]) : lo;
  if (!(lo >= 1 && hi <= 0x7e && lo <= hi))
    throw new UserError(`--ids must look like 1-7 (IDs from 1 to 126), not '${text}'.`);
  return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

const setZero: CliCommand = {
  path: ['rig', 'set-zero'],
  summary: 'Make the current pose the zero of some motors (fixes a wrong zero; arm in its home pose first)',
  help: `Usage: tandem rig set-zero --transport slcan|damiao --port PATH --ids A-B --yes

Sends the Damiao "save position as zero" frame (FF…FE) to each motor, with the motors disabled.
Put the arm in its home pose first (all joints at zero: joints 2 and 3 on their lower stops): after
this, wherever the arm is now reads 0. Without --yes it only says what it would do.

${BUS_HELP}
  --ids A-B                  which motors (e.g. 1-6 for the joints, 3 for joint 3 alone)
  --yes                      really do it`,
  options: { ...busOptions, ids: { type: 'string' }, yes: { type: 'boolean' } },
  async run(args, io) {
    if (typeof args.values.ids !== 'string')
      throw new UserError('Missing --ids: say which motors to zero, e.g. --ids 1-6 for all joints.');
    const ids = idsOption(args, '');
    if (!args.values.yes) {
      io.out(
        `This would make the current pose the zero of motor${ids.length > 1 ? 's' : ''} ${ids.join(', ')}. Put the arm in its home pose, then run again with --yes.\n`,
      );
      return 1;
    }
    const bus = busFor(args);
    await openBus(bus);
    try {
      const answered = new Set<number>();
      const off = bus.onFrame((f) => answered.add(f.id - FEEDBACK_ID_OFFSET));
      bus.send(ids.map((id) => specialFrame(id, 'disable')));
      await new Promise((r) => setTimeout(r, 200));
      const silent = ids.filter((id) => !answered.has(id));
      if (silent.length > 0) {
        off();
        throw new UserError(
          `Not zeroing: no answer from motor ${silent.join(', ')} on the ${bus.description}. Check power and the CAN cable.`,
          1,
        );
      }
      answered.clear();
      bus.send(ids.map((id) => specialFrame(id, 'zero')));
      await new Promise((r) => setTimeout(r, 200));
      off();
      const missed = ids.filter((id) => !answered.has(id));
      if (missed.length > 0)
        throw new UserError(
          `Motor ${missed.join(', ')} did not confirm the new zero; run 'tandem rig probe' to check its position.`,
          1,
        );
      io.out(
        `Motor${ids.length > 1 ? 's' : ''} ${ids.join(', ')} now read${ids.length > 1 ? '' : 's'} 0 at this pose.\n`,
      );
    } finally {
      await bus.close();
    }
  },
};

const calibrateGripper: CliCommand = {
  path: ['rig', 'calibrate-gripper'],
  summary: "Find one gripper's closed/open limits by gentle stalls and store them as a calibration record",
  help: `Usage: tandem rig calibrate-gripper --transport slcan|damiao --port PATH --arm left|right [--json]

With the arm disabled, drives the gripper motor slowly closed until it stalls, then open until it
stalls (torque bounded to 0.5 × speed N·m), and stores the two limits in the station store as a
'yam-gripper-limits' calibration (versioned and hashed). Keep fingers clear of the gripper.

${BUS_HELP}
  --arm left|right           which arm's gripper
  --speed RAD_S              motor speed while seeking the stops (default 2; the stall torque is 0.5 × speed N·m)`,
  options: { ...busOptions, arm: { type: 'string' }, speed: { type: 'string' } },
  async run(args, io) {
    const side = armOption(args);
    const speedRadS = numberOption(args, 'speed', 2, 0.2, 8);
    const bus = busFor(args);
    await openBus(bus);
    const rig = new YamCanRig({ buses: { [side]: bus } });
    try {
      let record;
      try {
        await rig.configure();
        record = await rig.calibrateGripper(side, { speedRadS });
      } catch (e) {
        if (e instanceof RigError) throw new UserError(e.message, 1);
        throw e;
      }
      const store = openStationStore(resolveDataDir(args.values.data as string | undefined, io.env, io.cwd));
      try {
        store.putCalibration({
          sha256: record.sha256,
          kind: record.kind,
          version: record.version,
          canonicalJson: record.canonicalJson,
        });
      } finally {
        store.close();
      }
      if (args.values.json)
        io.out(`${JSON.stringify({ arm: side, ...record.limits, sha256: record.sha256 }, null, 2)}\n`);
      else
        io.out(
          `The ${side} gripper closes at ${record.limits.closedRad.toFixed(3)} rad and opens at ${record.limits.openRad.toFixed(3)} rad (motor); stored as calibration ${record.sha256.slice(0, 12)}.\n`,
        );
    } finally {
      await rig.close();
    }
  },
};

export const commands: CliCommand[] = [probe, hold, emulate, setZero, calibrateGripper];
