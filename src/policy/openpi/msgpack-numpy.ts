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

const ITEM_SIZE: Record<NdDtype, number> = { '<f4': 4, '<f8': 8, '|u1': 1, '|i1': 1, '<i2': 2, '<u2': 2, '<i4': 4, '<u4': 4, '<i8': 8, '<u8': 8, '|b1': 1 };

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
    case '<f4': return (v, o) => v.getFloat32(o, true);
    case '<f8': return (v, o) => v.getFloat64(o, true);
    case '|u1': case '|b1': return (v, o) => v.getUint8(o);
    case '|i1': return (v, o) => v.getInt8(o);
    case '<i2': return (v, o) => v.getInt16(o, true);
    case '<u2': return (v, o) => v.getUint16(o, true);
    case '<i4': return (v, o) => v.getInt32(o, true);
    case '<u4': return (v, o) => v.getUint32(o, true);
    case '<i8': return (v, o) => Number(v.getBigInt64(o, true));
    case '<u8': return (v, o) => Number(v.getBigUint64(o, true));
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
export type WireValue = null | boolean | number | string | Uint8Array | NdArray | NpGeneric | WireValue[] | { [key: string]: WireValue };

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
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false });

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
  throw new WireFormatError(`a map key has type ${typeof k}; openpi keys are text or bytes`);
}

function isDtype(s: unknown): s is NdDtype {
  return typeof s === 'string' && s in ITEM_SIZE;
}

function fromUnpacked(v: unknown, depth: number): WireValue {
  if (depth > 32) throw new WireFormatError('the message nests deeper than 32 levels');
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Uint8Array) return v;
  if (Array.isArray(v)) return v.map((x) => fromUnpacked(x, depth + 1));
  if (v instanceof Map) {
    const entries = new Map<string, unknown>();
    for (const [k, x] of v) entries.set(keyText(k), x);
    if (entries.get('__ndarray__') === true) {
      const dtype = entries.get('dtype');
      const shape = entries.get('shape');
      const data = entries.get('data');
      if (!isDtype(dtype)) throw new WireFormatError(`an array has dtype ${JSON.stringify(dtype)}, which tandem does not read (little-endian numbers and bool only)`);
      if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) throw new WireFormatError('an array has a shape that is not a list of whole numbers');
      if (!(data instanceof Uint8Array)) throw new WireFormatError('an array has no raw bytes under "data"');
      const size = (shape as number[]).reduce((a, b) => a * b, 1);
      if (data.length !== size * ITEM_SIZE[dtype]) {
        throw new WireFormatError(`an array of shape [${shape.join(', ')}] and dtype ${dtype} carries ${data.length} bytes, not ${size * ITEM_SIZE[dtype]}`);
      }
      return new NdArray(dtype, shape as number[], data);
    }
    if (entries.get('__npgeneric__') === true) {
      return new NpGeneric(String(entries.get('dtype')), fromUnpacked(entries.get('data'), depth + 1));
    }
    const out: { [key: string]: WireValue } = {};
    for (const [k, x] of entries) out[k] = fromUnpacked(x, depth + 1);
    return out;
  }
  throw new WireFormatError(`the message holds a ${Object.prototype.toString.call(v)}, which openpi never sends`);
}

/** Decodes one openpi msgpack message. Throws WireFormatError on anything else. */
export function unpackOpenpi(bytes: Uint8Array): WireValue {
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
  if (v instanceof NdArray) return { dtype: v.dtype, shape: v.shape, values: v.size <= 1024 ? Array.from(v.toFloat32()) : `(${v.size} values)` };
  if (v instanceof NpGeneric) return wireToJson(v.value as WireValue);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(wireToJson);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wireToJson(x)]));
  return v;
}
