/**
 * A sim calibration record read from a JSON file (`--calibration FILE`): the same shape as
 * DEFAULT_SIM_CALIBRATION, every field present with its type, nothing extra — so a misspelt
 * field is refused instead of silently running the default physics. Problems come back as one
 * sentence naming the field.
 *
 * Hand-written rather than a schema library: the shape is taken from the default record itself,
 * so the check can never drift from the type, and the messages name fields the way a user edits them.
 */
import { calibrationProblem, DEFAULT_SIM_CALIBRATION, engineNameProblem, type SimCalibration } from './calibration.js';

/** A calibration file that cannot be used; the message is one sentence. */
export class CalibrationFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationFileError';
  }
}

/** A physical range for one numeric field; `unit` is printed after the numbers. */
export interface CalibrationRange {
  readonly min: number;
  readonly max: number;
  readonly unit: string;
  readonly whole?: boolean;
}

/**
 * What a calibration file may hold, beyond the type checks and calibrationProblem: each range holds
 * the default ('tandem sim calibration') with room to fit or explore either way, and refuses values
 * that hang or break the physics rather than calibrate it. Keys 'joints.X' apply to every joint.
 */
export const SIM_CALIBRATION_RANGES: Readonly<Record<string, CalibrationRange>> = {
  // Bounded so a record id can always be printed and stored; calibrations are numbered 1, 2, 3 ….
  version: { min: 0, max: 1_000_000, unit: '', whole: true },
  // Default 4 ms. 0.1 ms is 10 kHz physics, ten times finer than the 1 ms × 8 reference runs; a finer
  // step makes a 30 s episode millions of steps (5e-324 s never finishes). 20 ms: calibrationProblem's cap.
  physicsStepS: { min: 1e-4, max: 0.02, unit: 's' },
  // Default 4 substeps; the reference runs 8. Each substep is a full solve: 64 at the finest step is
  // 640 000 solves per simulated second, far past any fit; a billion never returns.
  solverIterations: { min: 1, max: 64, unit: '', whole: true },
  // Default 4 PGS passes per substep (2 let held bottles creep); passes are cheaper than substeps, same cap.
  pgsIterations: { min: 1, max: 64, unit: '', whole: true },
  // Scales of the catalogue: a hundredth to ten times its masses covers every object a fit could
  // confuse (an empty vs a filled bottle is ~20×) without near-zero masses that make contacts explode.
  objectMassScale: { min: 0.01, max: 10, unit: '' },
  objectFrictionScale: { min: 0, max: 10, unit: '' },
  // Coulomb coefficients: rubber on rubber is ≈ 1–2; 3 is already stickier than any table or pad.
  tableFriction: { min: 0, max: 3, unit: '' },
  fingerFriction: { min: 0, max: 3, unit: '' },
  // Default 15 N per finger. The motor model can map the gripper's torque to several hundred newtons,
  // which the real gripper's current limit never delivers; 200 N is >10× the default and crushes any
  // object in the catalogue, and 9e15 N made the solver diverge.
  gripperMaxForceN: { min: 0.1, max: 200, unit: 'N' },
  restitution: { min: 0, max: 1, unit: '' },
  // Joint damping: the vendor's idle damping is 0.05–0.3 Nms; 20 Nms would eat the whole torque of the
  // strongest motor (DM4340, 28 Nm) at 1.4 rad/s.
  'joints.dampingNms': { min: 0, max: 20, unit: 'Nms' },
  // Coulomb friction above the strongest joint motor's peak torque (DM4340, 28 Nm) would lock the joint.
  'joints.frictionNm': { min: 0, max: 28, unit: 'Nm' },
  // Reflected rotor inertia: ≈ 0.02 kg·m² for a DM4340 at 40:1; 1 kg·m² is 50× that, beyond any YAM joint.
  'joints.armatureKgM2': { min: 0, max: 1, unit: 'kg·m²' },
};

/** Far above any calibration record (≈ 1 kB); refused before JSON.parse holds a runaway file. */
const MAX_CALIBRATION_FILE_CHARS = 1 << 20;
/** A record nests 3 levels (record → joints → joint); anything much deeper is not one. */
const MAX_CALIBRATION_DEPTH = 8;

function jsonDepthOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function rangeProblem(field: string, v: number, r: CalibrationRange): string | undefined {
  if ((r.whole && !Number.isInteger(v)) || !(v >= r.min && v <= r.max)) {
    return `${field} must be ${r.whole ? 'a whole number ' : ''}from ${r.min} to ${r.max}${r.unit ? ` ${r.unit}` : ''}, not ${v}`;
  }
  return undefined;
}

function rangesProblem(cal: SimCalibration): string | undefined {
  for (const [key, r] of Object.entries(SIM_CALIBRATION_RANGES)) {
    if (key.startsWith('joints.')) {
      const k = key.slice('joints.'.length) as keyof SimCalibration['joints'][number];
      for (const [i, j] of cal.joints.entries()) {
        const p = rangeProblem(`joints[${i}].${k}`, j[k], r);
        if (p) return p;
      }
    } else {
      const p = rangeProblem(key, (cal as unknown as Record<string, number>)[key], r);
      if (p) return p;
    }
  }
  return undefined;
}

/** The name is shown, stored and hashed as UTF-8: printable text without lone surrogates. */
function nameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 57)}…` : name);
  // With the u flag a lone surrogate is a code point of category Cs; a proper pair reads as one character.
  if (/\p{Cs}/u.test(name)) return `name ${shown} holds a lone UTF-16 surrogate; a name is printable text`;
  if (name.length < 1 || name.length > 100 || /\p{C}/u.test(name))
    return `name ${shown} is not printable; a name is 1 to 100 printable characters`;
  return undefined;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isRecord = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

/**
 * Fields a record may leave out (the physics then runs as without them), and their ranges: fitted
 * records carry them, the default record does not, so its id stays the one stored rollouts carry.
 */
const OPTIONAL_FIELDS = [
  'motorTorqueScale',
  'commandLatencyS',
  'fingerReflectedMassKg',
  'armJoints',
  'engine',
  'engineVersion',
  'lineage',
] as const;
// Damiao torque constants differ by percents between units; half or one and a half times nominal is
// a wrong motor, not a calibration.
const TORQUE_SCALE_RANGE: CalibrationRange = { min: 0.5, max: 1.5, unit: '' };
// A CAN round trip is about a millisecond; 50 ms is past the motors' own watchdog budget for a reply.
const COMMAND_LATENCY_RANGE: CalibrationRange = { min: 0, max: 0.05, unit: 's' };
// A DM4310's rotor through the rack is ≈ 0.6 kg at each finger; 2 kg would be a motor three times its size.
const REFLECTED_MASS_RANGE: CalibrationRange = { min: 0, max: 2, unit: 'kg' };

/** Refuses missing fields, fields of the wrong type and fields the template does not have. */
function checkFields(
  where: string,
  template: object,
  value: Record<string, Json>,
  fail: (m: string) => never,
  optional: readonly string[] = [],
): void {
  const known = [...Object.keys(template), ...optional];
  const extra = Object.keys(value).filter((k) => !known.includes(k));
  if (extra.length > 0) {
    const names = extra.map((k) => `'${where === '' ? k : `${where}.${k}`}'`).join(', ');
    fail(
      `${extra.length === 1 ? 'unknown field' : 'unknown fields'} ${names} (the fields are ${known.join(', ')}), refused so a misspelt field never runs the default physics`,
    );
  }
  for (const k of Object.keys(template)) {
    const field = where === '' ? k : `${where}.${k}`;
    if (!Object.hasOwn(value, k)) fail(`field '${field}' is missing`);
    const want = typeof (template as Record<string, unknown>)[k];
    const got = value[k];
    if (Array.isArray((template as Record<string, unknown>)[k])) {
      if (!Array.isArray(got)) fail(`field '${field}' must be a list, not ${typeName(got)}`);
    } else if (typeof got !== want || (want === 'object' && !isRecord(got))) {
      fail(`field '${field}' must be a ${want === 'object' ? 'JSON object' : want}, not ${typeName(got)}`);
    }
  }
}

function optionalFieldsProblem(value: Record<string, Json>, fail: (m: string) => never): void {
  const scale = value.motorTorqueScale;
  if (scale !== undefined) {
    if (!Array.isArray(scale) || scale.length !== 6)
      fail(
        `field 'motorTorqueScale' must be a list of 6 numbers (one per arm joint), not ${typeName(scale)}${Array.isArray(scale) ? ` of ${scale.length}` : ''}`,
      );
    (scale as Json[]).forEach((v, i) => {
      if (typeof v !== 'number') fail(`field 'motorTorqueScale[${i}]' must be a number, not ${typeName(v)}`);
      const p = rangeProblem(`motorTorqueScale[${i}]`, v as number, TORQUE_SCALE_RANGE);
      if (p) fail(p);
    });
  }
  const latency = value.commandLatencyS;
  if (latency !== undefined) {
    if (typeof latency !== 'number') fail(`field 'commandLatencyS' must be a number, not ${typeName(latency)}`);
    const p = rangeProblem('commandLatencyS', latency as number, COMMAND_LATENCY_RANGE);
    if (p) fail(p);
  }
  const reflected = value.fingerReflectedMassKg;
  if (reflected !== undefined) {
    if (typeof reflected !== 'number')
      fail(`field 'fingerReflectedMassKg' must be a number, not ${typeName(reflected)}`);
    const p = rangeProblem('fingerReflectedMassKg', reflected as number, REFLECTED_MASS_RANGE);
    if (p) fail(p);
  }
  const armJoints = value.armJoints;
  if (armJoints !== undefined && armJoints !== 'impulse' && armJoints !== 'multibody')
    fail(
      `field 'armJoints' must be 'impulse' or 'multibody', not ${typeof armJoints === 'string' ? `'${armJoints}'` : typeName(armJoints)}`,
    );
  if (value.engine !== undefined) {
    const p = engineNameProblem(value.engine);
    if (p !== undefined) fail(`field '${p.replace(/^engine/, "engine'")}`);
  }
  if (
    value.engineVersion !== undefined &&
    !(typeof value.engineVersion === 'number' && Number.isInteger(value.engineVersion))
  )
    fail(`field 'engineVersion' must be a whole number, not ${typeName(value.engineVersion)}`);
  const lineage = value.lineage;
  if (lineage !== undefined) {
    if (!isRecord(lineage)) fail(`field 'lineage' must be a JSON object, not ${typeName(lineage)}`);
    const l = lineage as Record<string, Json>;
    if (typeof l.method !== 'string' || typeof l.fromSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(l.fromSha256))
      fail(`field 'lineage' must name its 'method' and the 64-hex id 'fromSha256' of the record it started from`);
    if (
      !Array.isArray(l.episodes) ||
      !l.episodes.every(
        (e) =>
          isRecord(e) &&
          typeof e.file === 'string' &&
          typeof e.sha256 === 'string' &&
          (e.role === 'fit' || e.role === 'holdout'),
      )
    ) {
      fail(`field 'lineage.episodes' must be a list of {file, sha256, role: 'fit' or 'holdout'}`);
    }
  }
}

/**
 * Parses a calibration file's text. `source` names the file in messages.
 * Throws CalibrationFileError with one sentence.
 */
export function parseSimCalibration(text: string, source: string): SimCalibration {
  const fail = (problem: string): never => {
    throw new CalibrationFileError(`The sim calibration file ${source}: ${problem}.`);
  };
  if (text.length > MAX_CALIBRATION_FILE_CHARS)
    fail(
      `${text.length} characters long, far more than a calibration record; start from the output of 'tandem sim calibration'`,
    );
  if (jsonDepthOver(text, MAX_CALIBRATION_DEPTH))
    fail(
      `nests deeper than ${MAX_CALIBRATION_DEPTH} levels, which no calibration record does; start from the output of 'tandem sim calibration'`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // V8 quotes the text around the error: keep it on one line and short.
    const why = (e as Error).message
      .replace(/[\p{C}\s]+/gu, ' ')
      .trim()
      .slice(0, 120);
    fail(`not valid JSON (${why}); start from the output of 'tandem sim calibration'`);
  }
  if (!isRecord(value))
    return fail(`${typeName(value)}, not a JSON object; start from the output of 'tandem sim calibration'`);
  checkFields('', DEFAULT_SIM_CALIBRATION, value, fail, OPTIONAL_FIELDS);
  optionalFieldsProblem(value, fail);
  const joints = value.joints as Json[];
  const jointTemplate = DEFAULT_SIM_CALIBRATION.joints[0];
  joints.forEach((j, i) => {
    if (!isRecord(j))
      fail(`field 'joints[${i}]' must be a JSON object {${Object.keys(jointTemplate).join(', ')}}, not ${typeName(j)}`);
    checkFields(`joints[${i}]`, jointTemplate, j as Record<string, Json>, fail);
  });
  const cal = value as unknown as SimCalibration;
  const problem = calibrationProblem(cal) ?? rangesProblem(cal) ?? nameProblem(cal.name);
  if (problem !== undefined) fail(problem);
  return cal;
}
