/**
 * Property tests of the station config parser (fast-check, fixed seed) and its checked-in corpus
 * (test/fixtures/fuzz/station-configs.json): a valid config with any field replaced by garbage,
 * removed, or joined by a prototype key (`__proto__`, `constructor`, `toString`…) or a typo, and
 * any value far too big or too deep, is either a config whose every field is well-typed and known,
 * or one short UserError sentence — never a TypeError or a stack overflow, never a field silently
 * ignored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import fc from 'fast-check';
import {
  LEADER_KINDS,
  parseStationConfig,
  readStationConfig,
  type StationConfig,
} from '../../src/app/station-config.js';
import { UserError } from '../../src/app/command.js';
import { SECURITY_MODES } from '../../drivers/cell-io/cell-io-config.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const SEED = 3132;

const VALID = {
  version: 1,
  rig: { type: 'yam-can', transport: 'slcan', ports: { left: '/dev/ttyACM0', right: '/dev/ttyACM1' } },
  cameras: [
    { name: 'cam_high', source: 'v4l2:/dev/video0', width: 640, height: 480, fps: 30, format: 'mjpeg' },
    { name: 'cam_left_wrist', source: 'testsrc' },
  ],
  leader: { kind: 'yam', ports: ['/dev/ttyACM2', '/dev/ttyACM3'] },
  projector: { calibration: 'projector.json', pjlink: '192.168.0.20:4352', display: 1 },
  cellIo: {
    endpointUrl: 'opc.tcp://127.0.0.1:4840',
    security: { mode: 'None', policy: 'None', trustUnknownServerCertificate: true },
    nodes: {
      estopOk: 'ns=1;s=E',
      doorClosed: 'ns=1;s=D',
      lightCurtainClear: 'ns=1;s=L',
      heartbeat: 'ns=1;s=H',
      towerRed: 'ns=1;s=R',
      towerAmber: 'ns=1;s=A',
      towerGreen: 'ns=1;s=G',
    },
    samplingIntervalMs: 10,
    staleAfterMs: 500,
    station: { port: 4841, host: '127.0.0.1' },
  },
  gripperCalibrations: { left: 'a'.repeat(64), right: 'b'.repeat(64) },
};

/** The fields each object of a station config may have; `[]` stands for every array entry. */
const SHAPE: Record<string, readonly string[]> = {
  '': ['version', 'rig', 'cameras', 'leader', 'projector', 'cellIo', 'gripperCalibrations'],
  'cameras.[]': ['name', 'source', 'width', 'height', 'fps', 'format'],
  leader: ['kind', 'ports'],
  projector: ['calibration', 'pjlink', 'display'],
  cellIo: ['endpointUrl', 'security', 'nodes', 'samplingIntervalMs', 'staleAfterMs', 'pkiDir', 'station'],
  'cellIo.security': [
    'mode',
    'policy',
    'certificateFile',
    'privateKeyFile',
    'trustUnknownServerCertificate',
    'allowInsecure',
  ],
  'cellIo.nodes': ['estopOk', 'doorClosed', 'lightCurtainClear', 'heartbeat', 'towerRed', 'towerAmber', 'towerGreen'],
  'cellIo.station': ['port', 'host', 'user'],
  'cellIo.station.user': ['name', 'passwordFile'],
  gripperCalibrations: ['left', 'right'],
};

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An accepted config held only fields the station knows, each an object where an object belongs, and no null read as "the default". */
function assertNothingIgnored(raw: unknown): void {
  const noNull = (v: unknown, path: string): void => {
    assert.notEqual(v, null, `accepted null as '${path}'`);
    if (v !== null && typeof v === 'object' && v !== DEEP && v !== LONG_LIST)
      for (const [k, x] of Object.entries(v)) noNull(x, `${path}.${k.slice(0, 40)}`);
  };
  if (isObject(raw)) for (const [k, v] of Object.entries(raw)) if (k !== 'rig') noNull(v, k);
  const at = (path: string): unknown[] => {
    let values: unknown[] = [raw];
    for (const part of path === '' ? [] : path.split('.')) {
      values = values.flatMap((v) =>
        part === '[]' ? (Array.isArray(v) ? v : []) : isObject(v) && Object.hasOwn(v, part) ? [v[part]] : [],
      );
    }
    return values;
  };
  for (const [path, fields] of Object.entries(SHAPE)) {
    for (const v of at(path)) {
      if (v === undefined || (path === 'cellIo' && typeof v === 'string')) continue;
      assert.ok(isObject(v), `accepted a ${Array.isArray(v) ? 'list' : typeof v} as '${path}'`);
      for (const k of Object.keys(v))
        assert.ok(fields.includes(k), `accepted an unknown field '${k.slice(0, 40)}' in '${path}'`);
    }
  }
}

/** What an accepted config promises the code that opens the hardware. */
function assertWellTyped(c: StationConfig): void {
  assert.equal(c.version, 1);
  assert.ok(isObject(c.rig) && typeof c.rig.type === 'string');
  const names = new Set<string>();
  for (const cam of c.cameras) {
    assert.match(cam.name, /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/);
    assert.ok(!names.has(cam.name));
    names.add(cam.name);
    assert.ok(Number.isFinite(cam.fps) && cam.fps >= 1 && cam.fps <= 240);
    for (const side of [cam.width, cam.height])
      if (side !== undefined) assert.ok(Number.isInteger(side) && side >= 16 && side <= 4096 && side % 2 === 0);
  }
  if (c.leader) {
    assert.ok(LEADER_KINDS.includes(c.leader.kind));
    assert.ok(c.leader.ports.length <= 2 && c.leader.ports.every((p) => typeof p === 'string' && p.startsWith('/')));
  }
  if (c.projector) {
    assert.ok(typeof c.projector.calibration === 'string' && isAbsolute(c.projector.calibration));
    if (c.projector.display !== undefined)
      assert.ok(Number.isInteger(c.projector.display) && c.projector.display >= 0 && c.projector.display <= 16);
    if (c.projector.pjlink !== undefined) assert.equal(typeof c.projector.pjlink, 'string');
  }
  if (c.cellIo) {
    const io = c.cellIo;
    assert.ok(io.endpointUrl.startsWith('opc.tcp://'));
    assert.ok(SECURITY_MODES.includes(io.security.mode));
    assert.equal(typeof io.security.trustUnknownServerCertificate, 'boolean');
    assert.ok(Number.isFinite(io.samplingIntervalMs) && io.samplingIntervalMs >= 0 && io.samplingIntervalMs <= 1000);
    assert.ok(Number.isFinite(io.staleAfterMs) && io.staleAfterMs >= 50 && io.staleAfterMs <= 10_000);
    for (const id of Object.values(io.nodes)) assert.ok(typeof id === 'string' && id.length > 0);
    if (io.station) assert.ok(Number.isInteger(io.station.port) && typeof io.station.host === 'string');
  }
  for (const [side, sha] of Object.entries(c.gripperCalibrations ?? {})) {
    assert.ok(side === 'left' || side === 'right');
    assert.match(sha, /^[0-9a-f]{64}$/);
  }
}

function assertOneSentence(e: unknown): void {
  assert.ok(e instanceof UserError, `threw ${(e as Error)?.name}: ${String((e as Error)?.message).slice(0, 300)}`);
  assert.ok(e.message.length <= 400, `a ${e.message.length}-character message: ${e.message.slice(0, 200)}…`);
  assert.match(
    e.message,
    /^(The station config|The cell I\/O config|Cannot read the cell I\/O config) [^\n]*\.$/,
    e.message,
  );
  assert.doesNotMatch(
    e.message,
    /Cannot read properties|is not a function|undefined \(reading|Maximum call stack|\[object Object\]/,
  );
}

/** Parses, checking either outcome; true when accepted. */
function parseOrRefuse(raw: unknown): boolean {
  let c: StationConfig;
  try {
    c = parseStationConfig(raw, 'station.json', '/lab');
  } catch (e) {
    assertOneSentence(e);
    return false;
  }
  assertNothingIgnored(raw);
  assertWellTyped(c);
  return true;
}

test('the checked-in corpus reads as recorded, from files', () => {
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/station-configs.json'), 'utf8')) as {
    name: string;
    text: string;
    ok: boolean;
    says?: string;
  }[];
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-config-fuzz-'));
  try {
    for (const [i, c] of corpus.entries()) {
      const file = join(dir, `station-${i}.json`);
      writeFileSync(file, c.text);
      let ok = true;
      try {
        const config = readStationConfig(file);
        assertNothingIgnored(JSON.parse(c.text));
        assertWellTyped(config);
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        assert.ok(
          e instanceof UserError,
          `${c.name}: threw ${(e as Error).name}: ${String((e as Error).message).slice(0, 200)}`,
        );
        assert.ok(!e.message.includes('\n') && e.message.length <= 400, `${c.name}: ${e.message.slice(0, 200)}`);
        if (c.says) assert.ok(e.message.includes(c.says), `${c.name}: ${e.message}`);
        ok = false;
      }
      assert.equal(ok, c.ok, c.name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Nested 100 000 deep: JSON.parse reads it, JSON.stringify of it overflows the stack. */
const DEEP = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
const HUGE_STRING = 'x'.repeat(1 << 20);
const LONG_LIST = new Array<null>(100_000).fill(null);
/** The big values stand in as symbols, so a failure prints readably (fast-check cannot print DEEP). */
const BIG = new Map<symbol, unknown>([
  [Symbol('100 000 deep'), DEEP],
  [Symbol('1 MiB string'), HUGE_STRING],
  [Symbol('100 000 nulls'), LONG_LIST],
]);
const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'prototype',
  'isPrototypeOf',
  '__defineGetter__',
];

const garbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(null, [], {}, '', 0, -1, 0.5, 1e308, -1e308, true, 'yam', '/dev/x', 'opc.tcp://10.0.0.1:4840'),
  fc.constantFrom(...BIG.keys()),
  fc.constantFrom(...PROTO_KEYS),
  fc.constantFrom(...PROTO_KEYS).map((k) => JSON.parse(`{${JSON.stringify(k)}: {"polluted": true}}`) as unknown),
);

/** Where a mutation lands: every field and nested field of VALID. */
const PATHS: readonly (string | number)[][] = [
  [],
  ['version'],
  ['rig'],
  ['rig', 'type'],
  ['cameras'],
  ['cameras', 0],
  ['cameras', 0, 'name'],
  ['cameras', 0, 'source'],
  ['cameras', 0, 'fps'],
  ['cameras', 1, 'width'],
  ['leader'],
  ['leader', 'kind'],
  ['leader', 'ports'],
  ['leader', 'ports', 0],
  ['projector'],
  ['projector', 'calibration'],
  ['projector', 'pjlink'],
  ['projector', 'display'],
  ['cellIo'],
  ['cellIo', 'endpointUrl'],
  ['cellIo', 'security'],
  ['cellIo', 'security', 'mode'],
  ['cellIo', 'security', 'policy'],
  ['cellIo', 'security', 'allowInsecure'],
  ['cellIo', 'security', 'trustUnknownServerCertificate'],
  ['cellIo', 'nodes'],
  ['cellIo', 'nodes', 'estopOk'],
  ['cellIo', 'nodes', 'heartbeat'],
  ['cellIo', 'samplingIntervalMs'],
  ['cellIo', 'staleAfterMs'],
  ['cellIo', 'pkiDir'],
  ['cellIo', 'station'],
  ['cellIo', 'station', 'port'],
  ['cellIo', 'station', 'host'],
  ['cellIo', 'station', 'user'],
  ['gripperCalibrations'],
  ['gripperCalibrations', 'left'],
];

type Mutation =
  | { op: 'set'; path: (string | number)[]; value: unknown }
  | { op: 'delete'; path: (string | number)[] }
  | { op: 'add'; path: (string | number)[]; key: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('set' as const), path: fc.constantFrom(...PATHS), value: garbage }),
  },
  fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...PATHS.filter((p) => p.length > 0)) }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      path: fc.constantFrom(...PATHS),
      key: fc.oneof(
        fc.constantFrom(...PROTO_KEYS, 'camera', 'Mode', 'staleAfterMS', 'allowInsecure', 'user'),
        fc.string({ maxLength: 8 }),
      ),
      value: garbage,
    }),
  },
);

/** A fresh copy of a garbage value, so no run changes the arbitraries' shared ones; JSON keeps a '__proto__' key an own field. */
function materialised(v: unknown): unknown {
  if (typeof v === 'symbol') return BIG.get(v);
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as unknown);
}

/** VALID with the mutations applied, as JSON.parse would have built it (a `__proto__` key is an own field). */
function mutated(mutations: readonly Mutation[]): unknown {
  let root: unknown = structuredClone(VALID);
  for (const m of mutations) {
    if (m.op === 'set' && m.path.length === 0) {
      root = materialised(m.value);
      continue;
    }
    let parent: unknown = root;
    const path = m.op === 'add' ? [...m.path, m.key] : m.path;
    for (const part of path.slice(0, -1))
      parent =
        parent !== null && typeof parent === 'object' && Object.hasOwn(parent, part)
          ? (parent as Record<string, unknown>)[part]
          : undefined;
    if (parent === null || typeof parent !== 'object' || parent === DEEP || parent === LONG_LIST) continue;
    const last = path[path.length - 1];
    // JSON has neither holes in lists nor named fields on them.
    if (Array.isArray(parent)) {
      if (typeof last !== 'number') continue;
      if (m.op === 'delete') parent.splice(last, 1);
      else parent[last] = materialised(m.value);
      continue;
    }
    if (m.op === 'delete') delete (parent as Record<string | number, unknown>)[last];
    else
      Object.defineProperty(parent, last, {
        value: materialised(m.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return root;
}

test('any field replaced, removed or added (prototype keys, typos, huge and deep values): a well-typed config or one sentence', () => {
  assert.equal(parseOrRefuse(structuredClone(VALID)), true, 'the valid config itself');
  fc.assert(
    fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (ms) => {
      parseOrRefuse(mutated(ms));
    }),
    { seed: SEED, numRuns: 800 },
  );
});
