/**
 * What the station makes of the values the cell PLC sends: each interlock input's notification
 * becomes "safe", "not safe" or "cannot tell" (which counts as not safe), and the heartbeat's
 * becomes a key that changes only when the PLC's value really changed.
 *
 * Whatever the PLC sends — a wrong type, an array or matrix where one Boolean belongs, NaN, a
 * megabyte string, a bad or uncertain status — an input counts as safe only as a Good scalar
 * Boolean `true`; anything else is one sentence naming what arrived. Nothing here walks a value
 * the PLC sent, so a huge array costs nothing.
 */
import clientPkg from 'node-opcua-client';
import type { DataValue } from 'node-opcua-client';
import type { InterlockReading } from '../../src/rig/contract.js';
import { INPUT_WORDS, INTERLOCK_INPUTS, type InterlockInput } from './cell-io-config.js';

const { DataType, VariantArrayType } = clientPkg;

/** One interlock input's latest notification, as the PLC client keeps it. */
export interface InputReport {
  /** The Boolean the PLC reported; undefined when it reported none the station can use. */
  readonly value: boolean | undefined;
  /** The notification's status was Good. */
  readonly good: boolean;
  /** Words for a sentence: the status name, or what arrived instead of a Boolean. */
  readonly status: string;
}

/** Asked every control cycle: the closed answer allocates nothing. */
const CLOSED: InterlockReading = { open: false };

/** Longest heartbeat string compared; a longer one is not a counter. */
const MAX_HEARTBEAT_STRING = 256;

function typeName(dataType: number): string {
  const name = (DataType as unknown as Record<number, unknown>)[dataType];
  return typeof name === 'string' ? name : `data type ${dataType}`;
}

/** One interlock input's notification: a Good scalar Boolean, or what arrived instead in words. */
export function inputReportOf(dv: DataValue): InputReport {
  const good = dv.statusCode.isGood();
  if (!good) return { value: undefined, good, status: dv.statusCode.name };
  const v = dv.value;
  if (v.arrayType !== VariantArrayType.Scalar) {
    const n = (v.value as { length?: unknown } | null)?.length;
    const count = typeof n === 'number' ? `${n} ` : '';
    return {
      value: undefined,
      good,
      status: `${v.arrayType === VariantArrayType.Matrix ? 'a matrix' : 'an array'} of ${count}${typeName(v.dataType)} values instead of one Boolean`,
    };
  }
  if (v.dataType !== DataType.Boolean || typeof v.value !== 'boolean') {
    return {
      value: undefined,
      good,
      status:
        v.dataType === DataType.Null
          ? 'an empty value instead of a Boolean'
          : `a ${typeName(v.dataType)} instead of a Boolean`,
    };
  }
  return { value: v.value, good, status: dv.statusCode.name };
}

/**
 * The heartbeat's value as a key that is equal exactly when the value is: a Good scalar Boolean,
 * finite number, 64-bit integer, date or short string. Anything else (NaN, an array, a structure)
 * gives undefined and never counts as the program running.
 */
export function heartbeatKeyOf(dv: DataValue): string | undefined {
  if (!dv.statusCode.isGood()) return undefined;
  const v = dv.value;
  if (v.arrayType !== VariantArrayType.Scalar) return undefined;
  const x: unknown = v.value;
  switch (v.dataType) {
    case DataType.Boolean:
      return typeof x === 'boolean' ? `b${x}` : undefined;
    case DataType.SByte:
    case DataType.Byte:
    case DataType.Int16:
    case DataType.UInt16:
    case DataType.Int32:
    case DataType.UInt32:
    case DataType.Float:
    case DataType.Double:
      return typeof x === 'number' && Number.isFinite(x) ? `n${x}` : undefined;
    case DataType.Int64:
    case DataType.UInt64:
      // node-opcua gives a 64-bit integer as [high, low] 32-bit words.
      return Array.isArray(x) && x.length === 2 && x.every((w) => Number.isInteger(w)) ? `l${x[0]}:${x[1]}` : undefined;
    case DataType.DateTime:
      return x instanceof Date && Number.isFinite(x.getTime()) ? `d${x.getTime()}` : undefined;
    case DataType.String:
      return typeof x === 'string' && x.length <= MAX_HEARTBEAT_STRING ? `s${x}` : undefined;
    default:
      return undefined;
  }
}

/** The interlock as the inputs alone say it: closed only when each is a Good `true`. */
export function interlockOfInputs(
  endpointUrl: string,
  inputs: ReadonlyMap<InterlockInput, InputReport>,
): InterlockReading {
  for (const input of INTERLOCK_INPUTS) {
    const st = inputs.get(input);
    const words = INPUT_WORDS[input];
    if (st?.value === undefined || !st.good) {
      return {
        open: true,
        reason: `The cell PLC at ${endpointUrl} reports ${words.what} as ${st?.status ?? 'not reported'}, so the station treats it as open.`,
      };
    }
    if (!st.value) return { open: true, reason: words.open };
  }
  return CLOSED;
}
