/**
 * A sim calibration record read from a JSON file (`--calibration FILE`): the same shape as
 * DEFAULT_SIM_CALIBRATION, every field present with its type, nothing extra — so a misspelt
 * field is refused instead of silently running the default physics. Problems come back as one
 * sentence naming the field.
 *
 * Hand-written rather than a schema library: the shape is taken from the default record itself,
 * so the check can never drift from the type, and the messages name fields the way a user edits them.
 */
import { calibrationProblem, DEFAULT_SIM_CALIBRATION, type SimCalibration } from './calibration.js';

/** A calibration file that cannot be used; the message is one sentence. */
export class CalibrationFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationFileError';
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isRecord = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** Refuses missing fields, fields of the wrong type and fields the template does not have. */
function checkFields(where: string, template: object, value: Record<string, Json>, fail: (m: string) => never): void {
  const known = Object.keys(template);
  const extra = Object.keys(value).filter((k) => !known.includes(k));
  if (extra.length > 0) {
    const names = extra.map((k) => `'${where === '' ? k : `${where}.${k}`}'`).join(', ');
    fail(`${extra.length === 1 ? 'unknown field' : 'unknown fields'} ${names} (the fields are ${known.join(', ')}), refused so a misspelt field never runs the default physics`);
  }
  for (const k of known) {
    const field = where === '' ? k : `${where}.${k}`;
    if (!(k in value)) fail(`field '${field}' is missing`);
    const want = typeof (template as Record<string, unknown>)[k];
    const got = value[k];
    if (Array.isArray((template as Record<string, unknown>)[k])) {
      if (!Array.isArray(got)) fail(`field '${field}' must be a list, not ${typeName(got)}`);
    } else if (typeof got !== want || (want === 'object' && !isRecord(got))) {
      fail(`field '${field}' must be a ${want === 'object' ? 'JSON object' : want}, not ${typeName(got)}`);
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    fail(`not valid JSON (${(e as Error).message}); start from the output of 'tandem sim calibration'`);
  }
  if (!isRecord(value)) return fail(`${typeName(value)}, not a JSON object; start from the output of 'tandem sim calibration'`);
  checkFields('', DEFAULT_SIM_CALIBRATION, value, fail);
  const joints = value.joints as Json[];
  const jointTemplate = DEFAULT_SIM_CALIBRATION.joints[0];
  joints.forEach((j, i) => {
    if (!isRecord(j)) fail(`field 'joints[${i}]' must be a JSON object {${Object.keys(jointTemplate).join(', ')}}, not ${typeName(j)}`);
    checkFields(`joints[${i}]`, jointTemplate, j as Record<string, Json>, fail);
  });
  const cal = value as unknown as SimCalibration;
  const problem = calibrationProblem(cal);
  if (problem !== undefined) fail(problem);
  return cal;
}
