/**
 * Property tests of what the station makes of the cell PLC's values (fast-check, fixed seed) and
 * their checked-in corpus (test/fixtures/fuzz/plc-values.json), on the node-opcua DataValues the
 * PLC client's subscription delivers: whatever type, shape or status arrives — NaN, a million-entry
 * array, a matrix, a Variant in a Variant, a bad or uncertain status — an interlock input counts as
 * safe only as a Good scalar Boolean true, the interlock reads open otherwise with one sentence,
 * and a heartbeat counts as changed only when its value did.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import clientPkg from 'node-opcua-client';
import type { DataValue as DataValueType, StatusCode } from 'node-opcua-client';
import { INTERLOCK_INPUTS, type InterlockInput } from '../../drivers/cell-io/cell-io-config.js';
import {
  heartbeatKeyOf,
  inputReportOf,
  interlockOfInputs,
  type InputReport,
} from '../../drivers/cell-io/plc-values.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const { DataValue, Variant, DataType, VariantArrayType, StatusCodes } = clientPkg;
const SEED = 3131;
const ENDPOINT = 'opc.tcp://127.0.0.1:4840';

const STATUSES = Object.values(StatusCodes) as StatusCode[];
const GOOD = StatusCodes.Good as StatusCode;
const HUGE_STRING = 'x'.repeat(1 << 20);

/** What a notification carries, before node-opcua builds its Variant. */
interface Sent {
  readonly status: StatusCode;
  readonly dataType: number;
  readonly arrayType: number;
  readonly value: unknown;
  readonly dimensions?: number[];
  /** Built once: node-opcua checks and copies every entry of an array it is handed. */
  readonly built?: DataValueType;
}

function dataValue(s: Sent): DataValueType {
  if (s.built) return s.built;
  const value = new Variant({
    dataType: s.dataType,
    arrayType: s.arrayType,
    value: s.value,
    ...(s.dimensions ? { dimensions: s.dimensions } : {}),
  });
  return new DataValue({ statusCode: s.status, value });
}

function built(status: StatusCode, dataType: number, value: unknown): Sent {
  const s: Sent = { status, dataType, arrayType: VariantArrayType.Array, value };
  return { ...s, built: dataValue(s) };
}
/** A million Booleans, a million doubles: what a PLC variable of the wrong size sends. */
const HUGE: Sent[] = [
  built(GOOD, DataType.Boolean, new Array<boolean>(1_000_000).fill(true)),
  built(GOOD, DataType.Double, new Float64Array(1_000_000).fill(1)),
  built(StatusCodes.BadOutOfMemory as StatusCode, DataType.Boolean, new Array<boolean>(1_000_000).fill(true)),
];

const scalar = (dataType: number, value: fc.Arbitrary<unknown>): fc.Arbitrary<Omit<Sent, 'status'>> =>
  value.map((v) => ({ dataType, arrayType: VariantArrayType.Scalar, value: v }));
const array = (dataType: number, value: fc.Arbitrary<unknown>): fc.Arbitrary<Omit<Sent, 'status'>> =>
  value.map((v) => ({ dataType, arrayType: VariantArrayType.Array, value: v }));

/** Every shape a PLC variable can have, weighted towards the Boolean the station wants. */
const variant: fc.Arbitrary<Omit<Sent, 'status'>> = fc.oneof(
  { weight: 6, arbitrary: scalar(DataType.Boolean, fc.boolean()) },
  scalar(DataType.Double, fc.double()),
  scalar(DataType.Float, fc.constantFrom(0, 1, NaN, Infinity, -Infinity)),
  scalar(DataType.Int32, fc.integer()),
  scalar(DataType.UInt32, fc.nat()),
  scalar(DataType.Byte, fc.integer({ min: 0, max: 255 })),
  scalar(DataType.Int64, fc.tuple(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.nat())),
  scalar(DataType.UInt64, fc.tuple(fc.nat(), fc.nat())),
  scalar(
    DataType.String,
    fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('true', '1', '__proto__', HUGE_STRING)),
  ),
  scalar(
    DataType.ByteString,
    fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)),
  ),
  scalar(DataType.DateTime, fc.date({ noInvalidDate: false })),
  scalar(DataType.Null, fc.constant(null)),
  scalar(
    DataType.Variant,
    fc.boolean().map((b) => new Variant({ dataType: DataType.Boolean, value: b })),
  ),
  array(DataType.Boolean, fc.array(fc.boolean(), { maxLength: 4 })),
  fc.boolean().map((b) => ({
    dataType: DataType.Boolean,
    arrayType: VariantArrayType.Matrix,
    value: [b, b],
    dimensions: [1, 2],
  })),
);
const sent: fc.Arbitrary<Sent> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc
      .record({ status: fc.oneof({ weight: 4, arbitrary: fc.constant(GOOD) }, fc.constantFrom(...STATUSES)), variant })
      .map(({ status, variant: v }) => ({ status, ...v })),
  },
  fc.constantFrom(...HUGE),
);

/** The only notification that may read safe. */
function isGoodTrue(s: Sent): boolean {
  return (
    s.status.isGood() && s.arrayType === VariantArrayType.Scalar && s.dataType === DataType.Boolean && s.value === true
  );
}

function assertPhrase(r: InputReport): void {
  assert.equal(typeof r.status, 'string');
  assert.ok(
    r.status.length > 0 && r.status.length <= 120 && !r.status.includes('\n'),
    `status ${JSON.stringify(r.status.slice(0, 200))}`,
  );
  assert.doesNotMatch(r.status, /undefined|\[object|NaN/);
}

function assertSentence(reason: string | undefined): void {
  assert.equal(typeof reason, 'string');
  assert.match(reason!, /^[A-Z][^\n]{10,300}\.$/, reason);
  assert.doesNotMatch(reason!, /undefined|\[object|NaN/, reason);
}

test('the checked-in corpus reads as recorded', () => {
  type Entry = {
    name: string;
    status: string;
    dataType: string;
    arrayType?: string;
    value: unknown;
    dimensions?: number[];
    input: boolean | null;
    says?: string;
    heartbeat: boolean;
  };
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/plc-values.json'), 'utf8')) as Entry[];
  const special: Record<string, unknown> = {
    NaN,
    Infinity,
    'huge-string': HUGE_STRING,
    'variant-true': new Variant({ dataType: DataType.Boolean, value: true }),
    'invalid-date': new Date(NaN),
  };
  for (const c of corpus) {
    const s: Sent =
      c.value === 'huge-array'
        ? HUGE[0]
        : {
            status: (StatusCodes as unknown as Record<string, StatusCode>)[c.status],
            dataType: (DataType as unknown as Record<string, number>)[c.dataType],
            arrayType: (VariantArrayType as unknown as Record<string, number>)[c.arrayType ?? 'Scalar'],
            value: typeof c.value === 'string' && Object.hasOwn(special, c.value) ? special[c.value] : c.value,
            ...(c.dimensions ? { dimensions: c.dimensions } : {}),
          };
    const r = inputReportOf(dataValue(s));
    assert.equal(r.value ?? null, c.input, c.name);
    assertPhrase(r);
    if (c.says) assert.ok(r.status.includes(c.says), `${c.name}: ${r.status}`);
    assert.equal(heartbeatKeyOf(dataValue(s)) !== undefined, c.heartbeat, c.name);
  }
});

test('any value the PLC sends: an input reads safe only as a Good scalar true, never throws', () => {
  fc.assert(
    fc.property(sent, (s) => {
      const r = inputReportOf(dataValue(s));
      assertPhrase(r);
      assert.equal(r.good && r.value === true, isGoodTrue(s));
      if (!isGoodTrue(s)) assert.ok(r.value !== true || !r.good);
    }),
    { seed: SEED, numRuns: 600 },
  );
});

test('any three inputs: the interlock is closed only when all three are Good true, else open with one sentence', () => {
  fc.assert(
    fc.property(fc.tuple(sent, sent, sent), fc.subarray([...INTERLOCK_INPUTS]), (three, unreported) => {
      const inputs = new Map<InterlockInput, InputReport>();
      INTERLOCK_INPUTS.forEach((input, i) => {
        if (!unreported.includes(input)) inputs.set(input, inputReportOf(dataValue(three[i])));
      });
      const reading = interlockOfInputs(ENDPOINT, inputs);
      const safe = unreported.length === 0 && three.every(isGoodTrue);
      assert.equal(reading.open, !safe);
      if (reading.open) assertSentence(reading.reason);
    }),
    { seed: SEED, numRuns: 400 },
  );
});

test('a heartbeat changes only when its value does: NaN, arrays and bad statuses never count as running', () => {
  fc.assert(
    fc.property(sent, sent, (a, b) => {
      const ka = heartbeatKeyOf(dataValue(a));
      // The same value delivered again (a fresh object from the wire) is no change, compared as the client does.
      assert.ok(heartbeatKeyOf(dataValue(a)) === ka, `${String(a.value)} read as a change`);
      if (ka === undefined) return;
      assert.ok(a.status.isGood() && a.arrayType === VariantArrayType.Scalar, 'only a Good scalar is a heartbeat');
      assert.ok(ka.length <= 300);
      const kb = heartbeatKeyOf(dataValue(b));
      const numeric = (s: Sent) => typeof s.value === 'number' || typeof s.value === 'boolean';
      if (kb !== undefined && numeric(a) && numeric(b) && a.dataType === b.dataType)
        assert.equal(ka === kb, Object.is(a.value, b.value) || a.value === b.value);
    }),
    { seed: SEED, numRuns: 600 },
  );
});
