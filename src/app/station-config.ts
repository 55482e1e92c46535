/**
 * The station config: one JSON file that says what this station is — its rig, its cameras, its
 * leader, its projector, its cell I/O and which gripper calibrations it runs with
 * (docs/station-config.md). Every command that brings hardware up reads it the same way
 * (`--station-config FILE`); the emulated cell is one preset of it (`--station-config cell`).
 *
 * Validation happens here, before anything is opened: every problem is one sentence naming the
 * field and what to do, and unknown fields are refused (a typo must not silently drop a camera).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CameraConfigError, parseCameraConfigs, type CameraConfig } from '../../drivers/cameras/camera-config.js';
import {
  CellIoConfigError,
  parseCellIoConfig,
  readCellIoConfig,
  type CellIoConfig,
} from '../../drivers/cell-io/cell-io-config.js';
import { ARM_SIDES, type ArmSide } from '../rig/contract.js';
import { CAN_TRANSPORTS, type CanTransport } from '../../drivers/can/bus.js';
import type { RigConfig } from '../rig/registry.js';
import { CAMERA_NAMES, type CameraName } from '../policy/contract.js';
import { UserError } from './command.js';
import { checkDriftThresholds, type DriftThresholds } from '../analysis/sim-drift.js';
import type { PlacementThresholds } from '../session/placement-gate.js';
import { DEFAULT_RIG_CONFIG } from './rig-registry.js';
import { rigKindOf } from './station-rig.js';

export const STATION_CONFIG_VERSION = 1;
/** `--station-config cell`: the embedded emulated cell with its three cameras. */
export const CELL_PRESET = 'cell';

export const LEADER_KINDS = ['yam', 'gello', 'emulated-yam', 'emulated-gello'] as const;
export type LeaderKind = (typeof LEADER_KINDS)[number];

export interface LeaderConfig {
  readonly kind: LeaderKind;
  /** One serial port per arm, left first (real leaders only). */
  readonly ports: readonly string[];
  /** The YAM leader's CAN adapters: SLCAN (default) or Damiao USB-CAN, as the follower's 'transport'. */
  readonly transport?: CanTransport;
}

export interface ProjectorConfig {
  /** The projector↔table calibration file ('tandem projector calibrate'), absolute. */
  readonly calibration: string;
  /** PJLink HOST[:PORT] to AV-mute the projector for every blank. */
  readonly pjlink?: string;
  /** Which display the projector window goes full screen on (Electron's display index). */
  readonly display?: number;
}

export interface StationConfig {
  readonly version: number;
  /** Where the config came from, for sentences ("station.json", "the cell preset"). */
  readonly source: string;
  readonly rig: RigConfig;
  readonly cameras: readonly CameraConfig[];
  readonly leader?: LeaderConfig;
  readonly projector?: ProjectorConfig;
  readonly cellIo?: CellIoConfig;
  /** Stored 'yam-gripper-limits' calibrations (sha256) applied to each arm's gripper. */
  readonly gripperCalibrations?: Partial<Record<ArmSide, string>>;
  /** The sim-twin drift alarm's thresholds (docs/evaluation.md); unset ones keep their defaults. */
  readonly simDrift?: Partial<DriftThresholds>;
  /** The placement check's limits before start (docs/evaluation.md); unset ones keep 10 mm / 10°. */
  readonly placementCheck?: Partial<PlacementThresholds>;
}

const KNOWN_FIELDS = [
  'version',
  'rig',
  'cameras',
  'leader',
  'projector',
  'cellIo',
  'gripperCalibrations',
  'simDrift',
  'placementCheck',
] as const;

/** A value as a sentence quotes it: its JSON cut to 60 characters; one too deeply nested to print is named, not printed. */
function quoted(v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    return Array.isArray(v) ? 'a list nested too deeply to show' : 'an object nested too deeply to show';
  }
  if (s === undefined) return String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** A field name as a sentence quotes it: cut to 40 characters. */
function named(k: string): string {
  return k.length > 40 ? `${k.slice(0, 37)}…` : k;
}

/** The emulated cell: its rig and the three cameras it renders (what a lab rehearses on). */
export function cellPreset(): StationConfig {
  return {
    version: STATION_CONFIG_VERSION,
    source: 'the cell preset',
    rig: { ...DEFAULT_RIG_CONFIG },
    cameras: CAMERA_NAMES.map((name) => ({ name, kind: 'cell' as const, fps: 10 })),
  };
}

/** The station config a rig config alone means (`--rig-config FILE`, the old flag): that rig and no cameras of its own. */
export function stationConfigOfRig(rig: unknown, source: string): StationConfig {
  return { version: STATION_CONFIG_VERSION, source, rig: checkRig(rig, source), cameras: [] };
}

function fail(source: string, what: string): never {
  throw new UserError(`The station config ${source} ${what}`);
}

function checkRig(rig: unknown, source: string): RigConfig {
  if (
    rig === null ||
    typeof rig !== 'object' ||
    Array.isArray(rig) ||
    typeof (rig as { type?: unknown }).type !== 'string'
  ) {
    fail(
      source,
      `needs 'rig': an object with a 'type', e.g. {"type": "yam-can", "transport": "slcan", "ports": {"left": "/dev/ttyACM0", "right": "/dev/ttyACM1"}}.`,
    );
  }
  return rig as RigConfig;
}

function parseLeader(raw: unknown, source: string): LeaderConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(
      source,
      `has a 'leader' that is not an object; write e.g. {"kind": "yam", "ports": ["/dev/ttyACM2", "/dev/ttyACM3"]}.`,
    );
  const o = raw as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => k !== 'kind' && k !== 'ports' && k !== 'transport');
  if (extra.length)
    fail(
      source,
      `has unknown field leader.${named(extra[0])}; remove it (a leader has 'kind', 'ports' and, for yam, 'transport').`,
    );
  if (!LEADER_KINDS.includes(o.kind as LeaderKind))
    fail(source, `has leader.kind ${quoted(o.kind)}; use one of ${LEADER_KINDS.join(', ')}.`);
  const kind = o.kind as LeaderKind;
  if (o.transport !== undefined && kind !== 'yam')
    fail(
      source,
      `gives a transport to the ${kind} leader; leader.transport is the YAM leader's CAN adapter framing (slcan or damiao), so remove it.`,
    );
  if (o.transport !== undefined && !(CAN_TRANSPORTS as readonly unknown[]).includes(o.transport))
    fail(source, `has leader.transport ${quoted(o.transport)}; use slcan (CANable) or damiao (Damiao USB-CAN).`);
  if (kind.startsWith('emulated-')) {
    if (o.ports !== undefined)
      fail(
        source,
        `gives ports to the ${kind} leader, which runs in the station; remove leader.ports or use kind "${kind.slice('emulated-'.length)}".`,
      );
    return { kind, ports: [] };
  }
  const ports = o.ports;
  if (
    !Array.isArray(ports) ||
    ports.length < 1 ||
    ports.length > 2 ||
    ports.some((p) => typeof p !== 'string' || !p.startsWith('/'))
  ) {
    fail(
      source,
      `needs leader.ports: one serial device path per arm, left first (e.g. ["/dev/ttyACM2", "/dev/ttyACM3"]).`,
    );
  }
  return {
    kind,
    ports: ports as string[],
    ...(o.transport !== undefined ? { transport: o.transport as CanTransport } : {}),
  };
}

function parseProjector(raw: unknown, source: string, baseDir: string): ProjectorConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(
      source,
      `has a 'projector' that is not an object; write e.g. {"calibration": "projector.json", "pjlink": "192.168.0.20"}.`,
    );
  const o = raw as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !['calibration', 'pjlink', 'display'].includes(k));
  if (extra.length)
    fail(
      source,
      `has unknown field projector.${named(extra[0])}; remove it (a projector has 'calibration', 'pjlink' and 'display').`,
    );
  if (typeof o.calibration !== 'string' || o.calibration === '')
    fail(source, `needs projector.calibration: the file 'tandem projector calibrate' wrote.`);
  if (o.pjlink !== undefined && (typeof o.pjlink !== 'string' || !/^[^\s:]+(:\d{1,5})?$/.test(o.pjlink)))
    fail(source, `has projector.pjlink ${quoted(o.pjlink)}; write HOST or HOST:PORT.`);
  if (
    o.display !== undefined &&
    (typeof o.display !== 'number' || !Number.isInteger(o.display) || o.display < 0 || o.display > 16)
  ) {
    fail(source, `has projector.display ${quoted(o.display)}; give the display's index (0 is the primary display).`);
  }
  return {
    calibration: resolve(baseDir, o.calibration),
    ...(o.pjlink !== undefined ? { pjlink: o.pjlink as string } : {}),
    ...(o.display !== undefined ? { display: o.display as number } : {}),
  };
}

function parseCellIo(raw: unknown, source: string, baseDir: string): CellIoConfig {
  try {
    // A file name, or the cell I/O config itself inline.
    if (typeof raw === 'string') return readCellIoConfig(resolve(baseDir, raw));
    return parseCellIoConfig(raw, `${source} cellIo`, baseDir);
  } catch (e) {
    if (e instanceof CellIoConfigError) throw new UserError(e.message);
    throw e;
  }
}

function parseGrippers(raw: unknown, source: string): Partial<Record<ArmSide, string>> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(
      source,
      `has a 'gripperCalibrations' that is not an object; write {"left": SHA256, "right": SHA256} with ids 'tandem rig calibrate-gripper' printed.`,
    );
  const out: Partial<Record<ArmSide, string>> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (!(ARM_SIDES as readonly string[]).includes(k))
      fail(source, `has gripperCalibrations.${named(k)}; the arms are ${ARM_SIDES.join(' and ')}.`);
    if (typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v))
      fail(
        source,
        `has gripperCalibrations.${k} ${quoted(v)}; give the calibration's 64-hex sha256 ('tandem rig calibrate-gripper --json' prints it).`,
      );
    out[k as ArmSide] = v;
  }
  return out;
}

function parseSimDrift(raw: unknown, source: string): Partial<DriftThresholds> {
  try {
    return checkDriftThresholds(raw, "'simDrift'");
  } catch (e) {
    if (e instanceof RangeError) fail(source, `is wrong: ${e.message}.`);
    throw e;
  }
}

function parsePlacementCheck(raw: unknown, source: string): Partial<PlacementThresholds> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(source, `has a 'placementCheck' that is not an object; write e.g. {"maxErrorMm": 10, "maxErrorDeg": 10}.`);
  const o = raw as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !['maxErrorMm', 'maxErrorDeg'].includes(k));
  if (extra.length)
    fail(
      source,
      `has unknown field placementCheck.${named(extra[0])}; remove it (a placement check has 'maxErrorMm' and 'maxErrorDeg').`,
    );
  const out: { maxErrorMm?: number; maxErrorDeg?: number } = {};
  for (const [k, max] of [
    ['maxErrorMm', 1000],
    ['maxErrorDeg', 180],
  ] as const) {
    const v = o[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > max)
      fail(source, `has placementCheck.${k} ${quoted(v)}; give a number above 0 and at most ${max}.`);
    out[k] = v;
  }
  return out;
}

/** Checks a parsed station config; relative file names in it are resolved against `baseDir`. */
export function parseStationConfig(raw: unknown, source: string, baseDir: string): StationConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(source, `must be a JSON object like {"version": ${STATION_CONFIG_VERSION}, "rig": {…}, "cameras": […]}.`);
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !(KNOWN_FIELDS as readonly string[]).includes(k));
  if (unknown.length)
    fail(source, `has unknown field '${named(unknown[0])}'; remove it (known: ${KNOWN_FIELDS.join(', ')}).`);
  if (o.version !== STATION_CONFIG_VERSION)
    fail(source, `has version ${quoted(o.version)}; this station reads "version": ${STATION_CONFIG_VERSION}.`);
  const rig = checkRig(o.rig, source);
  let cameras: CameraConfig[] = [];
  if (o.cameras !== undefined) {
    try {
      cameras = parseCameraConfigs(o.cameras, 'cameras');
    } catch (e) {
      if (e instanceof CameraConfigError) fail(source, `is wrong: ${e.message}`);
      throw e;
    }
  }
  return {
    version: STATION_CONFIG_VERSION,
    source,
    rig,
    cameras,
    ...(o.leader !== undefined ? { leader: parseLeader(o.leader, source) } : {}),
    ...(o.projector !== undefined ? { projector: parseProjector(o.projector, source, baseDir) } : {}),
    ...(o.cellIo !== undefined ? { cellIo: parseCellIo(o.cellIo, source, baseDir) } : {}),
    ...(o.gripperCalibrations !== undefined
      ? { gripperCalibrations: parseGrippers(o.gripperCalibrations, source) }
      : {}),
    ...(o.simDrift !== undefined ? { simDrift: parseSimDrift(o.simDrift, source) } : {}),
    ...(o.placementCheck !== undefined ? { placementCheck: parsePlacementCheck(o.placementCheck, source) } : {}),
  };
}

/** Reads a station config file, or the cell preset for `cell`. */
export function readStationConfig(file: string): StationConfig {
  if (file === CELL_PRESET) return cellPreset();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(
      `Cannot read the station config ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}.`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UserError(`The station config ${file} is not valid JSON; check it with 'python3 -m json.tool ${file}'.`);
  }
  return parseStationConfig(raw, file, dirname(file));
}

/** The leader as `tandem teleop record --leader` spells it. */
export function leaderSpecOf(l: LeaderConfig): string {
  return l.kind.startsWith('emulated-')
    ? l.kind
    : `${l.kind}:${l.transport === 'damiao' ? 'damiao:' : ''}${l.ports.join(',')}`;
}

/** The cameras a policy reads that the config lacks: one sentence, or undefined when all are there. */
export function missingPolicyCameras(
  config: StationConfig,
  policy: { name: string; cameras: readonly CameraName[] },
): string | undefined {
  const have = new Set(config.cameras.map((c) => c.name));
  const missing = policy.cameras.filter((c) => !have.has(c));
  if (missing.length === 0) return undefined;
  return (
    `Policy ${policy.name} reads camera${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which the station config ${config.source} does not have ` +
    `(it has ${config.cameras.map((c) => c.name).join(', ') || 'no cameras'}); add ${missing.length > 1 ? 'them' : 'it'} to 'cameras', or rehearse with --blank-cameras (black frames).`
  );
}

/** The options every command that brings the rig up takes. */
export const STATION_CONFIG_OPTIONS = {
  'station-config': { type: 'string' },
  'rig-config': { type: 'string' },
} as const;

export const STATION_CONFIG_HELP = `  --station-config FILE  the station config (docs/station-config.md): rig, cameras, leader, projector,
                      cell I/O, gripper calibrations; 'cell' is the emulated cell with its three cameras
  --rig-config FILE   a rig config alone (the station config's 'rig'; no cameras but the emulated cell's own)`;

/** --station-config FILE | --rig-config FILE | neither (the embedded emulated cell), as a station config. */
export async function stationConfigFromArgs(
  values: Readonly<Record<string, unknown>>,
  cwd: string,
): Promise<StationConfig> {
  const station = values['station-config'];
  const rig = values['rig-config'];
  if (typeof station === 'string' && typeof rig === 'string') {
    throw new UserError(
      `Give --station-config or --rig-config, not both; the station config holds the rig config under 'rig'.`,
    );
  }
  if (typeof station === 'string') return readStationConfig(station === CELL_PRESET ? station : resolve(cwd, station));
  if (typeof rig === 'string') {
    const file = resolve(cwd, rig);
    return stationConfigOfRig(await readRigConfig(file), file);
  }
  return stationConfigOfRig(await readRigConfig(undefined), 'the embedded default (the emulated cell)');
}

/** The calibrations the store must hold for `gripperCalibrations`, as the yam-can rig config's gripperLimits. */
export function rigConfigWithGrippers(
  config: StationConfig,
  store: { getCalibration(sha256: string): { kind: string; canonicalJson: string } | undefined },
): RigConfig {
  const g = config.gripperCalibrations;
  if (!g || Object.keys(g).length === 0) return config.rig;
  if (config.rig.type !== 'yam-can')
    throw new UserError(
      `The station config ${config.source} gives gripperCalibrations for a ${config.rig.type} rig; they apply to yam-can rigs only, so remove them.`,
    );
  const limits: Record<string, { closedRad: number; openRad: number }> = {};
  for (const side of ARM_SIDES) {
    const sha = g[side];
    if (!sha) continue;
    const rec = store.getCalibration(sha);
    if (!rec || rec.kind !== 'yam-gripper-limits') {
      throw new UserError(
        `The station config ${config.source} names gripper calibration ${sha.slice(0, 12)}… for the ${side} arm, which this store does not hold as a yam-gripper-limits calibration; run 'tandem rig calibrate-gripper --arm ${side}' and copy its sha256.`,
      );
    }
    const body = JSON.parse(rec.canonicalJson) as { arm?: string; closedRad: number; openRad: number };
    if (body.arm !== side)
      throw new UserError(
        `The station config ${config.source} gives the ${body.arm ?? 'other'} arm's gripper calibration ${sha.slice(0, 12)}… to the ${side} arm; swap them.`,
      );
    limits[side] = { closedRad: body.closedRad, openRad: body.openRad };
  }
  return { ...config.rig, gripperLimits: limits };
}

/** The cell I/O to open: --cell-io FILE or the station config's cellIo (never both), or none. */
export function cellIoSourceOf(
  config: StationConfig,
  cellIoFile: string | undefined,
): string | { readonly config: CellIoConfig; readonly where: string } | undefined {
  if (cellIoFile !== undefined && config.cellIo)
    throw new UserError(
      `The station config ${config.source} has cellIo already; drop --cell-io, or remove 'cellIo' from the config.`,
    );
  if (cellIoFile !== undefined) return cellIoFile;
  return config.cellIo ? { config: config.cellIo, where: `${config.source} cellIo` } : undefined;
}

/**
 * The cameras a rollout opens and records. A station config names its cameras; a rig config alone
 * (--rig-config) names none, and on the emulated cell gets the cell's own cameras the policy reads,
 * so a bare rig config still runs camera policies on the cell.
 */
export function rolloutCameras(
  station: StationConfig,
  policy: { readonly cameras: readonly CameraName[] },
  cellFps: number,
): readonly CameraConfig[] {
  if (station.cameras.length > 0 || !rigKindOf(station.rig).ownWorld) return station.cameras;
  return policy.cameras.map((name) => ({ name, kind: 'cell' as const, fps: cellFps }));
}

/** The rig config file's JSON, or the embedded default (`yam-emulated`) without one. */
export async function readRigConfig(file: string | undefined): Promise<unknown> {
  if (!file) return DEFAULT_RIG_CONFIG;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new UserError(
      `Cannot read the rig config ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UserError(`The rig config ${file} is not valid JSON.`);
  }
}
