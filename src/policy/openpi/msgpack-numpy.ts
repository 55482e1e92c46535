/**
 * openpi's `msgpack_numpy` in TypeScript. openpi does not use a msgpack extension type for
 * arrays: each array is a map whose keys are msgpack **bin** (Python bytes), e.g.
 *   {b"__ndarray__": True, b"data": <raw C-order bytes>, b"dtype": "<f4", b"shape": [14]}
 * and numpy scalars are {b"__npgeneric__": True, b"data": <item>, b"dtype": "<f4"}.
 * msgpackr writes a Map whose keys are Uint8Array as bin keys (with useRecords: false) and,
 * with mapsAsObjects: false, reads every map back as a Map so bin keys survive.
 */
import { Packr, Unpackr } from 'msgpackr';

export type NdDtype = '<f4' | '<f8' | '|u1' | '|i1' | '<i2' | '<u2' | '<i4' | '<u4' | '<i8' | '<u8' | '|b1';

const ITEM_SIZE: Record<NdDtype, number> = {
  '<f4': 4,
  '<f8': 8,
  '|u1': 1,
  '|i1': 1,
  '<i2': 2,
  '<u2': 2,
  '<i4': 4,
  '<u4': 4,
  '<i8': 8,
  '<u8': 8,
  '|b1': 1,
};

/** A numpy array as it travels: raw little-endian bytes in C order. */
export class NdArray {
  constructor(
    readonly dtype: NdDtype,
    readonly shape: readonly number[],
    readonly data: Uint8Array,
  ) {}

  static float32(values: Float32Array, shape: readonly number[]): NdArray {
    return new NdArray('<f4', shape, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
  }

  static uint8(values: Uint8Array, shape: readonly number[]): NdArray {
    return new NdArray('|u1', shape, values);
  }

  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }

  /** The values as float32 (copied; converted from any numeric dtype). */
  toFloat32(): Float32Array {
    const n = this.size;
    const out = new Float32Array(n);
    const view = new DataView(this.data.buffer, this.data.byteOffset, this.data.byteLength);
    const read = reader(this.dtype);
    const step = ITEM_SIZE[this.dtype];
    for (let i = 0; i < n; i++) out[i] = read(view, i * step);
    return out;
  }
}

function reader(dtype: NdDtype): (v: DataView, o: number) => number {
  switch (dtype) {
    case '<f4':
      return (v, o) => v.getFloat32(o, true);
    case '<f8':
      return (v, o) => v.getFloat64(o, true);
    case '|u1':
    case '|b1':
      return (v, o) => v.getUint8(o);
    case '|i1':
      return (v, o) => v.getInt8(o);
    case '<i2':
      return (v, o) => v.getInt16(o, true);
    case '<u2':
      return (v, o) => v.getUint16(o, true);
    case '<i4':
      return (v, o) => v.getInt32(o, true);
    case '<u4':
      return (v, o) => v.getUint32(o, true);
    case '<i8':
      return (v, o) => Number(v.getBigInt64(o, true));
    case '<u8':
      return (v, o) => Number(v.getBigUint64(o, true));
  }
}

/** A numpy scalar (`np.float32(1.5)` and friends) as openpi sends it. */
export class NpGeneric {
  constructor(
    readonly dtype: string,
    readonly value: unknown,
  ) {}
}

/** What a decoded openpi message holds: msgpack values with arrays as NdArray, maps as plain objects. */
export type WireValue =
  | null
  | boolean
  | number
  | string
  | Uint8Array
  | NdArray
  | NpGeneric
  | WireValue[]
  | { [key: string]: WireValue };

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const K_NDARRAY = utf8.encode('__ndarray__');
const K_NPGENERIC = utf8.encode('__npgeneric__');
const K_DATA = utf8.encode('data');
const K_DTYPE = utf8.encode('dtype');
const K_SHAPE = utf8.encode('shape');

/** A message that is not openpi msgpack; the text says what was wrong. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

// variableMapSize: fixmap headers for small maps, as Python's msgpack writes them.
const packr = new Packr({ useRecords: false, variableMapSize: true });
// structuredClone: false refuses msgpackr's reference extensions even if the scan above were bypassed.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false, structuredClone: false });

/** Turns our values into msgpackr input: NdArray → Map with bin keys (key order as openpi writes it). */
function toPackable(v: unknown): unknown {
  if (v instanceof NdArray) {
    return new Map<Uint8Array, unknown>([
      [K_NDARRAY, true],
      [K_DATA, v.data],
      [K_DTYPE, v.dtype],
      [K_SHAPE, [...v.shape]],
    ]);
  }
  if (v instanceof NpGeneric) {
    return new Map<Uint8Array, unknown>([
      [K_NPGENERIC, true],
      [K_DATA, v.value],
      [K_DTYPE, v.dtype],
    ]);
  }
  if (v instanceof Uint8Array || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toPackable);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = toPackable(x);
  return out;
}

export function packOpenpi(value: WireValue | Record<string, unknown>): Uint8Array {
  return packr.pack(toPackable(value));
}

/** Bounds checked on the raw bytes before msgpackr allocates anything. */
export interface UnpackLimits {
  /** Whole message. Default 256 MiB (callers pass the bound their expected shapes give). */
  readonly maxBytes?: number;
  /** Nesting of maps and lists. openpi messages nest 3–4 deep. Default 32. */
  readonly maxDepth?: number;
  /** Values in the whole message (every map entry counts twice). Default 100 000. */
  readonly maxItems?: number;
}

const DEFAULT_LIMITS: Required<UnpackLimits> = { maxBytes: 256 * 2 ** 20, maxDepth: 32, maxItems: 100_000 };

/**
 * One pass over the msgpack bytes, without allocating, before msgpackr sees them: every value's type
 * byte and length is checked against the end of the message, nesting and value counts are bounded,
 * and extension types are refused. openpi's msgpack_numpy never writes extensions, and msgpackr reads
 * several (structured-clone references that build cycles, dates, errors, typed arrays) that would
 * otherwise reach the decoder. Iterative, so deep nesting cannot overflow the stack here.
 */
function scanMsgpack(b: Uint8Array, limits: Required<UnpackLimits>): void {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // remaining[d]: values still to read at depth d; the top level holds one value.
  const remaining: number[] = [1];
  let items = 0;
  let at = 0;
  const need = (n: number, what: string): void => {
    if (at + n > b.length) throw new WireFormatError(`the message ends before its ${what} (byte ${at} of ${b.length})`);
  };
  const open = (count: number, what: string): void => {
    // Each value takes at least one byte: a count beyond the bytes left is a lie, refused before msgpackr sizes a container by it.
    if (count > b.length - at)
      throw new WireFormatError(`a ${what} claims ${count} values but only ${b.length - at} bytes follow`);
    if (count > 0) {
      if (remaining.length > limits.maxDepth)
        throw new WireFormatError(`the message nests deeper than ${limits.maxDepth} levels`);
      remaining.push(count);
    }
  };
  while (remaining.length > 0) {
    if (remaining[remaining.length - 1] === 0) {
      remaining.pop();
      continue;
    }
    remaining[remaining.length - 1]--;
    if (++items > limits.maxItems) throw new WireFormatError(`the message holds more than ${limits.maxItems} values`);
    need(1, 'next value');
    const t = b[at++];
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) continue;
    if (t >= 0xa0 && t <= 0xbf) {
      need(t & 0x1f, 'text');
      at += t & 0x1f;
      continue;
    }
    if (t >= 0x80 && t <= 0x8f) {
      open((t & 0x0f) * 2, 'map');
      continue;
    }
    if (t >= 0x90 && t <= 0x9f) {
      open(t & 0x0f, 'list');
      continue;
    }
    switch (t) {
      case 0xcc:
      case 0xd0:
        need(1, 'number');
        at += 1;
        continue;
      case 0xcd:
      case 0xd1:
        need(2, 'number');
        at += 2;
        continue;
      case 0xca:
      case 0xce:
      case 0xd2:
        need(4, 'number');
        at += 4;
        continue;
      case 0xcb:
      case 0xcf:
      case 0xd3:
        need(8, 'number');
        at += 8;
        continue;
      case 0xc4:
      case 0xd9: {
        need(1, 'length');
        const n = b[at];
        at += 1;
        need(n, t === 0xc4 ? 'bytes' : 'text');
        at += n;
        continue;
      }
      case 0xc5:
      case 0xda: {
        need(2, 'length');
        const n = view.getUint16(at);
        at += 2;
        need(n, t === 0xc5 ? 'bytes' : 'text');
        at += n;
        continue;
      }
      case 0xc6:
      case 0xdb: {
        need(4, 'length');
        const n = view.getUint32(at);
        at += 4;
        need(n, t === 0xc6 ? 'bytes' : 'text');
        at += n;
        continue;
      }
      case 0xdc: {
        need(2, 'length');
        const n = view.getUint16(at);
        at += 2;
        open(n, 'list');
        continue;
      }
      case 0xdd: {
        need(4, 'length');
        const n = view.getUint32(at);
        at += 4;
        open(n, 'list');
        continue;
      }
      case 0xde: {
        need(2, 'length');
        const n = view.getUint16(at);
        at += 2;
        open(n * 2, 'map');
        continue;
      }
      case 0xdf: {
        need(4, 'length');
        const n = view.getUint32(at);
        at += 4;
        open(n * 2, 'map');
        continue;
      }
      case 0xc1:
        throw new WireFormatError(`byte ${at - 1} is 0xc1, which msgpack never uses`);
      default:
        throw new WireFormatError(
          `byte ${at - 1} starts a msgpack extension type (0x${t.toString(16)}), which openpi never sends`,
        );
    }
  }
  if (at !== b.length) throw new WireFormatError(`the message has ${b.length - at} bytes after its end`);
}

/** A value named in an error message: short, and never JSON.stringify (BigInts and cycles would throw). */
export function describeWireValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'bigint') return `${v} (a number)`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'nothing';
  if (v instanceof Uint8Array) return `${v.length} raw bytes`;
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (v instanceof Map) return 'a map';
  if (typeof v === 'object' && (Object.getPrototypeOf(v) === null || Object.getPrototypeOf(v) === Object.prototype))
    return 'a map';
  return `a ${Object.prototype.toString.call(v).slice(8, -1)}`;
}

function keyText(k: unknown): string {
  if (typeof k === 'string') return k;
  if (k instanceof Uint8Array) {
    try {
      return utf8Decoder.decode(k);
    } catch {
      throw new WireFormatError('a map key is bytes that are not UTF-8 text');
    }
  }
  if (typeof k === 'number') return String(k);
  throw new WireFormatError(`a map key is ${describeWireValue(k)}; openpi keys are text or bytes`);
}

function isDtype(s: unknown): s is NdDtype {
  return typeof s === 'string' && Object.hasOwn(ITEM_SIZE, s);
}

const NDARRAY_KEYS = ['__ndarray__', 'data', 'dtype', 'shape'];
const NPGENERIC_KEYS = ['__npgeneric__', 'data', 'dtype'];
/** numpy allows 64 dimensions; openpi sends at most 3 (images). */
const MAX_NDIM = 8;

function checkKeys(entries: Map<string, unknown>, allowed: readonly string[], what: string): void {
  for (const k of entries.keys())
    if (!allowed.includes(k))
      throw new WireFormatError(`${what} has the key ${describeWireValue(k)}; openpi's has only ${allowed.join(', ')}`);
  for (const k of allowed) if (!entries.has(k)) throw new WireFormatError(`${what} has no "${k}"`);
}

function ndArrayFrom(entries: Map<string, unknown>): NdArray {
  checkKeys(entries, NDARRAY_KEYS, 'an array');
  const dtype = entries.get('dtype');
  const shape = entries.get('shape');
  const data = entries.get('data');
  if (!isDtype(dtype))
    throw new WireFormatError(
      `an array has dtype ${describeWireValue(dtype)}, which tandem does not read (little-endian numbers and bool only)`,
    );
  if (
    !Array.isArray(shape) ||
    shape.length > MAX_NDIM ||
    !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)
  ) {
    throw new WireFormatError(
      `an array has shape ${describeWireValue(shape)}; a shape is a list of at most ${MAX_NDIM} whole numbers`,
    );
  }
  if (!(data instanceof Uint8Array)) throw new WireFormatError('an array has no raw bytes under "data"');
  const dims = shape as number[];
  const size = dims.reduce((a, b) => a * b, 1);
  if (data.length !== size * ITEM_SIZE[dtype]) {
    throw new WireFormatError(
      `an array of shape [${dims.join(', ')}] and dtype ${dtype} carries ${data.length} bytes, not ${size * ITEM_SIZE[dtype]}`,
    );
  }
  return new NdArray(dtype, dims, data);
}

function npGenericFrom(entries: Map<string, unknown>): NpGeneric {
  checkKeys(entries, NPGENERIC_KEYS, 'a numpy scalar');
  const dtype = entries.get('dtype');
  let value = entries.get('data');
  if (!isDtype(dtype))
    throw new WireFormatError(`a numpy scalar has dtype ${describeWireValue(dtype)}, which tandem does not read`);
  if (typeof value === 'bigint') value = Number(value);
  if (typeof value !== 'number' && typeof value !== 'boolean')
    throw new WireFormatError(`a numpy scalar holds ${describeWireValue(value)}, not a number`);
  return new NpGeneric(dtype, value);
}

function fromUnpacked(v: unknown, depth: number): WireValue {
  if (depth > DEFAULT_LIMITS.maxDepth)
    throw new WireFormatError(`the message nests deeper than ${DEFAULT_LIMITS.maxDepth} levels`);
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v;
  // uint64/int64 beyond 2^53: openpi sends them only as counters; a Number is close enough and prints.
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Uint8Array) return v;
  if (Array.isArray(v)) return v.map((x) => fromUnpacked(x, depth + 1));
  if (v instanceof Map) {
    const entries = new Map<string, unknown>();
    for (const [k, x] of v) {
      const key = keyText(k);
      // b"data" and "data" in one map: which one numpy meant is anyone's guess.
      if (entries.has(key)) throw new WireFormatError(`a map has the key ${describeWireValue(key)} twice`);
      entries.set(key, x);
    }
    if (entries.has('__ndarray__')) return ndArrayFrom(entries);
    if (entries.has('__npgeneric__')) return npGenericFrom(entries);
    // No prototype: a key "__proto__" (or "constructor", "toString") is a plain entry, never inherited
    // through. An ordinary object would take "__proto__" as its prototype and let a peer forge fields.
    const out = Object.create(null) as { [key: string]: WireValue };
    for (const [k, x] of entries) out[k] = fromUnpacked(x, depth + 1);
    return out;
  }
  throw new WireFormatError(`the message holds ${describeWireValue(v)}, which openpi never sends`);
}

/** Decodes one openpi msgpack message within `limits`. Throws WireFormatError on anything else. */
export function unpackOpenpi(bytes: Uint8Array, limits: UnpackLimits = {}): WireValue {
  const lim: Required<UnpackLimits> = { ...DEFAULT_LIMITS, ...limits };
  if (bytes.length > lim.maxBytes)
    throw new WireFormatError(`the message is ${bytes.length} bytes; at most ${lim.maxBytes} are accepted here`);
  try {
    scanMsgpack(bytes, lim);
  } catch (e) {
    throw new WireFormatError(`not valid msgpack (${(e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = unpackr.unpack(bytes);
  } catch (e) {
    throw new WireFormatError(`not valid msgpack (${(e as Error).message})`);
  }
  return fromUnpacked(raw, 0);
}

/** For printing (probe --json): arrays become {dtype, shape, values}, bytes become hex. */
export function wireToJson(v: WireValue): unknown {
  if (v instanceof NdArray)
    return {
      dtype: v.dtype,
      shape: v.shape,
      values: v.size <= 1024 ? Array.from(v.toFloat32()) : `(${v.size} values)`,
    };
  if (v instanceof NpGeneric) return wireToJson(v.value as WireValue);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(wireToJson);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wireToJson(x as WireValue)]));
  return v;
}
