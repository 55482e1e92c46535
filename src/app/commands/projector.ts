/**
 * `tandem projector …`: calibrate the table → projector homography from aligned crosshairs, show
 * a layout's footprints (as a PNG, and over PJLink on a real projector), check a projector's
 * state, and run a PJLink emulator to rehearse with. The work lives in calibration/projector
 * and drivers/projector; this file reads and writes files and turns bad input into one sentence.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  intOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import { asUserError, readLayoutSetFile, readUserFile, writeNewFile } from './layouts.js';
import {
  calibrateProjector,
  parseCalibration,
  serializeCalibration,
  type CalibrationPoint,
  type ProjectorCalibration,
  type ProjectorResolution,
} from '../../../calibration/projector/calibration-record.js';
import { mapPoint, ProjectorCalibrationError, type Vec2 } from '../../../calibration/projector/homography.js';
import { crosshairSvg, type ReaderSide } from '../../../calibration/projector/projection-svg.js';
import { svgToPng } from '../../../calibration/projector/render.js';
import { LayoutProjector, type ProjectorResult } from '../../../calibration/projector/layout-projector.js';
import { MemoryOutput } from '../../../calibration/projector/outputs.js';
import { layoutAt } from '../../layouts/layout-set.js';
import { PjlinkClient, PjlinkError, parsePjlinkAddress } from '../../../drivers/projector/pjlink-client.js';
import { PjlinkEmulator } from '../../../drivers/projector/pjlink-emulator.js';

/** Runs fn, turning calibration and PJLink errors into UserErrors (one sentence, no stack). */
async function projectorErrors<T>(fn: () => T | Promise<T>, exitCode = 2): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ProjectorCalibrationError) throw new UserError(e.message, exitCode);
    if (e instanceof PjlinkError) throw new UserError(e.message, 3);
    throw e;
  }
}

function parseResolution(text: string, what: string): ProjectorResolution {
  const m = /^(\d{2,5})x(\d{2,5})$/.exec(text.trim());
  if (!m) throw new UserError(`${what} must be WIDTHxHEIGHT in pixels, e.g. 1920x1080, not '${text}'.`);
  return { widthPx: Number(m[1]), heightPx: Number(m[2]) };
}

const isVec2 = (v: unknown): v is [number, number] =>
  Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/**
 * A points file: `{"resolution": "1920x1080", "points": [{"label": "...", "tableMm": [x, y],
 * "projectorPx": [column, row]}, ...]}`, or just the points array.
 */
export function parsePointsFile(text: string, source: string): { points: CalibrationPoint[]; resolution?: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new UserError(
      `${source} is not JSON; give the point pairs as {"points": [{"tableMm": [x, y], "projectorPx": [column, row]}, ...]}.`,
    );
  }
  const obj = Array.isArray(v) ? { points: v } : (v as { points?: unknown; resolution?: unknown });
  if (typeof obj !== 'object' || obj === null || !Array.isArray(obj.points)) {
    throw new UserError(
      `${source} has no "points" list; give the point pairs as {"points": [{"tableMm": [x, y], "projectorPx": [column, row]}, ...]}.`,
    );
  }
  const points = obj.points.map((p: unknown, i: number): CalibrationPoint => {
    const q = p as { tableMm?: unknown; projectorPx?: unknown; label?: unknown };
    if (typeof q !== 'object' || q === null || !isVec2(q.tableMm) || !isVec2(q.projectorPx)) {
      throw new UserError(
        `Point ${i + 1} in ${source} is not {"tableMm": [x, y], "projectorPx": [column, row]} with numbers.`,
      );
    }
    return {
      ...(typeof q.label === 'string' && q.label ? { label: q.label } : {}),
      tableMm: q.tableMm,
      projectorPx: q.projectorPx,
    };
  });
  return { points, ...(typeof obj.resolution === 'string' ? { resolution: obj.resolution } : {}) };
}

export function readCalibrationFile(io: Pick<CliIo, 'cwd'>, file: string): Promise<ProjectorCalibration> {
  const { text } = readUserFile(io, file, 'projector calibration');
  return projectorErrors(() => parseCalibration(text, file));
}

export function pjlinkFrom(args: ParsedCommandArgs, io: CliIo): PjlinkClient | undefined {
  const a = args.values.pjlink;
  return typeof a === 'string' ? pjlinkClient(a, io.env) : undefined;
}

/** A PJLink client for HOST[:PORT] (password: $TANDEM_PJLINK_PASSWORD); a bad address is one UserError sentence. */
export function pjlinkClient(address: string, env: NodeJS.ProcessEnv): PjlinkClient {
  const { host, port } = (() => {
    try {
      return parsePjlinkAddress(address);
    } catch (e) {
      throw new UserError(`--pjlink: ${(e as Error).message}`);
    }
  })();
  const password = env.TANDEM_PJLINK_PASSWORD;
  return new PjlinkClient({ host, port, ...(password ? { password } : {}), timeoutMs: 5000 });
}

const f1 = (v: number): string => v.toFixed(1);

const calibrate: CliCommand = {
  path: ['projector', 'calibrate'],
  summary: 'fit the table → projector homography from aligned crosshairs',
  help: `Usage: tandem projector calibrate --points FILE [--resolution 1920x1080] -o calib.json
                                [--previous old.json] [--crosshairs-png F] [--force] [--json]

Fits the homography from the table plane (mm, table frame: origin at the table's centre, +x
away from the arms, +y to the robot's left) to the projector image (px) by DLT with Hartley
normalisation, prints each point's reprojection error in mm and px and the RMS, and writes a
versioned calibration record pinned by its SHA-256. Needs at least 4 pairs, spread over the
table with no three in a line; 6 or more also measure the error (4 fit exactly).

  --points FILE        JSON: {"resolution": "1920x1080", "points": [{"label": "far-left
                       corner", "tableMm": [480, 580], "projectorPx": [312, 96]}, ...]}
  --resolution WxH     the projector's image size (default: the file's, else 1920x1080)
  -o, --output F       calibration file to write; kept unless --force
  --previous F         the calibration this one replaces: its version + 1 and hash are recorded
  --crosshairs-png F   also draw the file's crosshairs at their projector pixels (and, once
                       fitted, a ring where the calibration puts each table point); with
                       only this and no -o, draws the crosshairs and fits nothing
  --force              replace existing output files`,
  options: {
    points: { type: 'string' },
    resolution: { type: 'string' },
    output: { type: 'string', short: 'o' },
    previous: { type: 'string' },
    'crosshairs-png': { type: 'string' },
    force: { type: 'boolean' },
  },
  async run(args, io) {
    const pointsFile = requireString(args, 'points');
    const out = typeof args.values.output === 'string' ? args.values.output : undefined;
    const crosshairsPng = typeof args.values['crosshairs-png'] === 'string' ? args.values['crosshairs-png'] : undefined;
    if (!out && !crosshairsPng)
      throw new UserError('Missing -o FILE (where to write the calibration). Run with --help to see the usage.');
    const force = args.values.force === true;
    for (const f of [out, crosshairsPng]) {
      if (f && existsSync(resolve(io.cwd, f)) && !force)
        throw new UserError(`${f} already exists; choose another name or add --force to replace it.`);
    }
    const { text } = readUserFile(io, pointsFile, 'points');
    const parsed = parsePointsFile(text, pointsFile);
    const resolution = parseResolution(
      typeof args.values.resolution === 'string' ? args.values.resolution : (parsed.resolution ?? '1920x1080'),
      '--resolution',
    );
    const previous =
      typeof args.values.previous === 'string' ? await readCalibrationFile(io, args.values.previous) : undefined;
    const crosshairs = parsed.points.map((p) => ({ px: p.projectorPx, ...(p.label ? { label: p.label } : {}) }));
    if (!out) {
      writeNewFile(io, crosshairsPng!, await svgToPng(crosshairSvg(resolution, crosshairs)), force);
      io.out(
        `Drew ${crosshairs.length} crosshairs at ${resolution.widthPx}x${resolution.heightPx} to ${crosshairsPng}.\n`,
      );
      return;
    }
    let calib: ProjectorCalibration;
    try {
      calib = await projectorErrors(() =>
        calibrateProjector({ points: parsed.points, resolution, ...(previous ? { previous } : {}) }),
      );
    } catch (e) {
      // The crosshairs still help find the bad pair.
      if (crosshairsPng) writeNewFile(io, crosshairsPng, await svgToPng(crosshairSvg(resolution, crosshairs)), force);
      throw e;
    }
    const path = writeNewFile(io, out, serializeCalibration(calib), force);
    if (crosshairsPng) {
      const predicted = calib.points.map((p): Vec2 => mapPoint(calib.tableToProjector, p.tableMm));
      writeNewFile(io, crosshairsPng, await svgToPng(crosshairSvg(resolution, crosshairs, predicted)), force);
    }
    const e = calib.errors;
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ file: path, sha256: calib.sha256, version: calib.version, resolution, points: calib.points.length, errors: e, conditioning: calib.conditioning })}\n`,
      );
      return;
    }
    const width = Math.max(5, ...calib.points.map((p) => (p.label ?? '').length));
    const lines = calib.points.map((p, i) => {
      const pe = e.perPoint[i];
      return `  ${String(i + 1).padStart(2)}  ${(p.label ?? '').padEnd(width)}  table (${f1(p.tableMm[0])}, ${f1(p.tableMm[1])}) mm  →  (${f1(p.projectorPx[0])}, ${f1(p.projectorPx[1])}) px   error ${pe.mm.toFixed(2)} mm  ${pe.px.toFixed(2)} px`;
    });
    const summary =
      e.sigmaMm === null
        ? 'With exactly 4 points the fit is exact, so these errors say nothing; align 6 or more points to measure it.'
        : `RMS ${e.rmsMm.toFixed(2)} mm (${e.rmsPx.toFixed(2)} px), worst ${e.maxMm.toFixed(2)} mm; alignment noise ≈ ${e.sigmaMm.toFixed(2)} mm per axis.`;
    io.out(
      `Calibrated the projector (${resolution.widthPx}x${resolution.heightPx}) from ${calib.points.length} points:\n${lines.join('\n')}\n${summary}\nWrote ${out} (version ${calib.version}, sha256 ${calib.sha256}).\n${crosshairsPng ? `Drew the crosshairs (rings: where the calibration puts each table point) to ${crosshairsPng}.\n` : ''}`,
    );
  },
};

const READER_SIDES: readonly ReaderSide[] = ['far', 'near', 'left', 'right'];

function reportPjlink(io: CliIo, r: ProjectorResult, what: string): number {
  if (r.problem) {
    io.err(`${r.problem}\n`);
    return 3;
  }
  io.out(`${what}\n`);
  return 0;
}

const show: CliCommand = {
  path: ['projector', 'show'],
  summary: "project a layout's object footprints (or a blank frame)",
  help: `Usage: tandem projector show --layouts FILE --layout I --calibration calib.json [-o image.png]
                           [--pjlink HOST:PORT] [--power-on] [--reader-side far|near|left|right]
                           [--force] [--json]
       tandem projector show --blank --calibration calib.json [-o black.png] [--pjlink HOST:PORT]

Draws layout I as object footprints on the table plane — white outline (set the object inside
it), a dot = upright, a cross = upside down, an arrow = lying (pointing to its top), the
handle's side in cyan, its name and posture in yellow — warped into the projector's pixels by
the calibration, on black, with the table edge in grey to check the calibration by eye.
--blank draws the all-black frame shown while the arms move.

  --layouts FILE       layout set (its hash is checked)
  --layout I           layout index (0-based)
  --calibration F      calibration from 'tandem projector calibrate'
  -o, --output F       PNG to write at the projector's resolution; kept unless --force
  --pjlink HOST:PORT   a PJLink projector: unmuted after a layout, muted on --blank
                       (password: TANDEM_PJLINK_PASSWORD)
  --power-on           with --pjlink: power on and wait for the lamp to warm up first
  --reader-side S      where the operator stands to read the names (default far: across
                       the table from the arms)`,
  options: {
    layouts: { type: 'string' },
    layout: { type: 'string' },
    calibration: { type: 'string' },
    output: { type: 'string', short: 'o' },
    pjlink: { type: 'string' },
    'power-on': { type: 'boolean' },
    'reader-side': { type: 'string' },
    blank: { type: 'boolean' },
    force: { type: 'boolean' },
  },
  async run(args, io) {
    const calibration = await readCalibrationFile(io, requireString(args, 'calibration'));
    const out = typeof args.values.output === 'string' ? args.values.output : undefined;
    const control = pjlinkFrom(args, io);
    if (!out && !control)
      throw new UserError(
        'Give -o image.png (a PNG file), --pjlink HOST:PORT (a projector), or both. Run with --help to see the usage.',
      );
    if (out && existsSync(resolve(io.cwd, out)) && args.values.force !== true)
      throw new UserError(`${out} already exists; choose another name or add --force to replace it.`);
    if (args.values['power-on'] === true) {
      if (!control) throw new UserError('--power-on needs --pjlink HOST:PORT (the projector to power on).');
      const ms = await projectorErrors(() => control.powerOnAndWait({ timeoutMs: 120_000, pollMs: 1000 }));
      io.out(`The projector is on (warmed up in ${(ms / 1000).toFixed(1)} s).\n`);
    }
    const side = typeof args.values['reader-side'] === 'string' ? args.values['reader-side'] : 'far';
    if (!READER_SIDES.includes(side as ReaderSide))
      throw new UserError(`--reader-side must be one of ${READER_SIDES.join(', ')}, not '${side}'.`);
    // The frame goes to memory first, then whole into the file: a refused layout writes nothing.
    const memory = new MemoryOutput();
    const projector = new LayoutProjector({
      calibration,
      output: memory,
      ...(control ? { control } : {}),
      projection: { readerSide: side as ReaderSide },
    });
    let result: ProjectorResult;
    let said: string;
    if (args.values.blank === true) {
      result = await projector.blank();
      said = `Blank frame (${calibration.resolution.widthPx}x${calibration.resolution.heightPx})${control ? ', projector muted' : ''}`;
    } else {
      const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
      const index = intOption(args, 'layout', undefined, 0, Number.MAX_SAFE_INTEGER);
      const layout = asUserError(() => layoutAt(set, index));
      result = await projector.show(set, index);
      said = `Layout ${index} (tier ${layout.tier}, ${layout.objects.length} objects) through calibration ${calibration.sha256.slice(0, 12)}${control ? ', projector unmuted' : ''}`;
    }
    if (out) writeNewFile(io, out, memory.last!.png, args.values.force === true);
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ file: out ? resolve(io.cwd, out) : null, calibration: calibration.sha256, blank: args.values.blank === true, problem: result.problem ?? null })}\n`,
      );
      return result.problem ? 3 : 0;
    }
    return reportPjlink(io, result, `${said}${out ? `: ${out}` : ''}.`);
  },
};

const status: CliCommand = {
  path: ['projector', 'status'],
  summary: "a PJLink projector's power, AV mute, input and faults",
  help: `Usage: tandem projector status --pjlink HOST:PORT [--json]

Asks the projector over PJLink (password: TANDEM_PJLINK_PASSWORD) for its power state, AV
mute, input and error status (fan, lamp, temperature, cover, filter, other).`,
  options: { pjlink: { type: 'string' } },
  async run(args, io) {
    const pj = pjlinkFrom(args, io);
    if (!pj) throw new UserError('Missing --pjlink HOST:PORT. Run with --help to see the usage.');
    const power = await projectorErrors(() => pj.powerState());
    const errors = await projectorErrors(() => pj.errorStatus());
    const on = power === 'on';
    const muted = on ? await projectorErrors(() => pj.avMuted()) : null;
    const input = on ? await projectorErrors(() => pj.input()) : null;
    if (args.values.json) {
      io.out(`${JSON.stringify({ power, avMuted: muted, input, errors })}\n`);
      return;
    }
    const faults = Object.entries(errors).filter(([, v]) => v !== 'ok');
    io.out(
      `Projector ${pj.host}:${pj.port}: ${power}${on ? `, AV mute ${muted ? 'on' : 'off'}, input ${input}` : ''}; ${faults.length === 0 ? 'no faults' : faults.map(([k, v]) => `${k} ${v}`).join(', ')}.\n`,
    );
  },
};

const emulate: CliCommand = {
  path: ['projector', 'emulate'],
  summary: 'run a PJLink projector emulator (rehearsal without a projector)',
  help: `Usage: tandem projector emulate [--port N] [--warm-up-s S] [--powered-on]

Listens on 127.0.0.1 as a PJLink class 1 projector until Ctrl-C: power with a warm-up, AV mute,
inputs, error status; password from TANDEM_PJLINK_PASSWORD when set.

  --port N        TCP port (default 4352; 0 for any free port)
  --warm-up-s S   lamp warm-up time in seconds (default 2)
  --powered-on    start on and warmed up`,
  options: { port: { type: 'string' }, 'warm-up-s': { type: 'string' }, 'powered-on': { type: 'boolean' } },
  async run(args, io) {
    const port = intOption(args, 'port', 4352, 0, 65535);
    const warmUpS = intOption(args, 'warm-up-s', 2, 0, 600);
    const password = io.env.TANDEM_PJLINK_PASSWORD;
    const emu = new PjlinkEmulator({
      port,
      warmUpMs: warmUpS * 1000,
      poweredOn: args.values['powered-on'] === true,
      ...(password ? { password } : {}),
    });
    try {
      await emu.start();
    } catch (e) {
      throw new UserError(
        `Cannot listen on 127.0.0.1:${port} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); choose another --port.`,
      );
    }
    io.out(`PJLink projector emulator on 127.0.0.1:${emu.port}${password ? ' (password set)' : ''}; Ctrl-C to stop.\n`);
    await new Promise<void>((r) =>
      io.signal.aborted ? r() : io.signal.addEventListener('abort', () => r(), { once: true }),
    );
    await emu.close();
  },
};

export const commands: readonly CliCommand[] = [calibrate, show, status, emulate];
