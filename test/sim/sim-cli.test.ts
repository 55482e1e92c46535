import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandemProcess, runTandem } from '../helpers/cli.js';
import { wasmTierFromEnv } from '../../src/sim/wasm-tier.js';

/** The WebAssembly tier this process does not run (the test runner asks for baseline). */
const otherWasmTier = (): string => (wasmTierFromEnv() === 'baseline' ? 'optimizing' : 'baseline');
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { simCalibrationHash } from '../../src/sim/calibration.js';

function layoutFile(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sim-'));
  const file = join(dir, 'bottles.json');
  writeFileSync(
    file,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 3], perTier: 1, seed: 11 })),
  );
  return { dir, file };
}

test('the same layout, policy and seed give the same final state in two separate processes; another seed does not', async () => {
  const { dir, file } = layoutFile();
  try {
    // The scripted policy moves both arms from the first second: a trajectory worth comparing.
    const args = (seed: number) => [
      'sim',
      'rollout',
      '--layouts',
      file,
      '--layout',
      '1',
      '--policy',
      'code:bottles-in-the-bin',
      '--seconds',
      '2',
      '--seed',
      String(seed),
      '--json',
    ];
    // a in a child process, b and c in this one: two processes, the same final state — the child on
    // V8's other WebAssembly tier (src/sim/wasm-tier.ts), which must change the speed only.
    const [a, b, c] = await Promise.all([
      runTandemProcess(args(7), { env: { TANDEM_WASM_TIER: otherWasmTier() } }),
      runTandem(args(7)),
      runTandem(args(8)),
    ]);
    for (const r of [a, b, c]) assert.equal(r.code, 0, r.stderr);
    const [ja, jb, jc] = [a, b, c].map((r) => JSON.parse(r.stdout));
    assert.equal(ja.valid, true);
    assert.equal(typeof ja.progress, 'number');
    assert.deepEqual(
      Object.keys(ja.counts)
        .filter((k) => !k.startsWith('objects:'))
        .sort(),
      ['inBin', 'offTable', 'target'],
      "the task's counts plus the objects off the table",
    );
    assert.equal(ja.counts.offTable, 0);
    assert.match(ja.finalStateHash, /^[0-9a-f]{64}$/);
    assert.equal(ja.finalStateHash, jb.finalStateHash, 'bit-identical across processes and WebAssembly tiers');
    assert.notEqual(ja.finalStateHash, jc.finalStateHash, 'the seed changes the placement noise, so the final state');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unknown policy spec is one sentence listing the known ones, and nothing runs', async () => {
  const { dir, file } = layoutFile();
  try {
    const r = await runTandem([
      'sim',
      'rollout',
      '--layouts',
      file,
      '--layout',
      '0',
      '--policy',
      'code:juggle',
      '--json',
    ]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^Unknown policy 'code:juggle'; known policies: code:hold, code:bottles-in-the-bin, .*onnx:path\/to\/model\.onnx, ws:\/\/host:port\.\n$/,
    );
    const bad = await runTandem(['sim', 'rollout', '--layouts', file, '--layout', '9', '--policy', 'code:hold']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^Layout 9 does not exist: this set has layouts 0 to 1\.\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sim calibration prints the default record; a saved copy runs the same physics, an edited one runs other physics under its own hash', async () => {
  const { dir, file } = layoutFile();
  try {
    const printed = await runTandem(['sim', 'calibration']);
    assert.equal(printed.code, 0, printed.stderr);
    const record = JSON.parse(printed.stdout);
    const shownHash = /: ([0-9a-f]{64})\n$/.exec(printed.stderr)?.[1];
    assert.ok(shownHash, printed.stderr);
    assert.equal(shownHash, simCalibrationHash(record), 'the id on stderr is the hash of the record on stdout');
    const saved = join(dir, 'default.json');
    writeFileSync(saved, printed.stdout);
    const edited = { ...record, physicsStepS: 0.001 };
    const editedFile = join(dir, 'fine-step.json');
    writeFileSync(editedFile, JSON.stringify(edited, null, 2));
    const args = (...extra: string[]) => [
      'sim',
      'rollout',
      '--layouts',
      file,
      '--layout',
      '0',
      '--policy',
      'code:hold',
      '--seconds',
      '0.5',
      '--json',
      ...extra,
    ];
    const [plain, fromSaved, fromEdited] = await Promise.all([
      runTandem(args()),
      runTandem(args('--calibration', saved)),
      runTandem(args('--calibration', editedFile)),
    ]);
    for (const r of [plain, fromSaved, fromEdited]) assert.equal(r.code, 0, r.stderr);
    const [a, b, c] = [plain, fromSaved, fromEdited].map((r) => JSON.parse(r.stdout));
    assert.equal(a.simCalibration, shownHash);
    assert.equal(b.simCalibration, shownHash, 'the saved default is the default');
    assert.equal(b.finalStateHash, a.finalStateHash);
    assert.equal(c.simCalibration, simCalibrationHash(edited));
    assert.notEqual(c.simCalibration, a.simCalibration);
    assert.notEqual(c.finalStateHash, a.finalStateHash, 'the edited step size really drives the physics');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bad calibration file is refused with exit 2 and one sentence naming the problem, before anything runs', async () => {
  const { dir, file } = layoutFile();
  try {
    const base = JSON.parse((await runTandem(['sim', 'calibration'])).stdout);
    const write = (name: string, text: string): string => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    const { fingerFriction: _dropped, ...missing } = base;
    const cases: [string, RegExp][] = [
      [
        write('truncated.json', JSON.stringify(base).slice(0, 40)),
        /^The sim calibration file .*truncated\.json: not valid JSON \(.*\); start from the output of 'tandem sim calibration'\.\n$/,
      ],
      [
        write('missing.json', JSON.stringify(missing)),
        /^The sim calibration file .*missing\.json: field 'fingerFriction' is missing\.\n$/,
      ],
      [
        write('typo.json', JSON.stringify({ ...base, tableFricton: 0.9 })),
        /^The sim calibration file .*typo\.json: unknown field 'tableFricton' \(the fields are name, version, .*\), refused so a misspelt field never runs the default physics\.\n$/,
      ],
      [
        write('negative.json', JSON.stringify({ ...base, physicsStepS: -0.002 })),
        /^The sim calibration file .*negative\.json: physicsStepS must be in \(0, 0\.02\] s, not -0\.002\.\n$/,
      ],
      [
        write(
          'joint.json',
          JSON.stringify({
            ...base,
            joints: base.joints.map((j: object, i: number) => (i === 4 ? { ...j, dampingNms: 'high' } : j)),
          }),
        ),
        /^The sim calibration file .*joint\.json: field 'joints\[4\]\.dampingNms' must be a number, not a string\.\n$/,
      ],
      [join(dir, 'absent.json'), /^There is no sim calibration file at .*absent\.json\.\n$/],
    ];
    const runs = await Promise.all(
      cases.map(([cal]) =>
        runTandem([
          'sim',
          'rollout',
          '--layouts',
          file,
          '--layout',
          '0',
          '--policy',
          'code:hold',
          '--seconds',
          '0.2',
          '--calibration',
          cal,
          '--json',
        ]),
      ),
    );
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, `${cases[i][0]}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, cases[i][1]);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
