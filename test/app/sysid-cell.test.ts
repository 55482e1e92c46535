/**
 * System identification proven on the emulated cell, end to end through the real drivers: on a
 * cell whose arms and objects differ from the catalogue (gap seed 6: torque constants, the hand's
 * reflected mass, bottles 18 % heavier), free-motion teleop takes on a clear table and code-policy
 * rollouts that grasp, lift and carry a bottle; `tandem sysid fit
 * --layouts` on them; the fit checked against the cell's hidden truth, which only this test reads,
 * after the fit (the fit never sees it). Takes and rollouts run on virtual time (`clock:
 * 'virtual'`): they do not depend on how busy the machine is, so every step must succeed and every
 * take be usable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { cellTruth } from '../../src/emulated-cell/cell-truth.js';

// Minutes of physics (the cell's takes and rollouts, the fit's replays): V8's optimizing
// WebAssembly tier pays back its compile here (this file 79.5 CPU-s on the baseline tier against
// 59.2, one run each on the same machine; src/sim/wasm-tier.ts).
process.env.TANDEM_WASM_TIER = 'optimizing';

const GAP = 6;

interface FitJson {
  heldOut: { beforeAll: number; afterAll: number; holding?: { samples: number; before: number; after: number } };
  parameters: {
    name: string;
    start: number;
    fitted: number;
    sigma: number;
    identified: boolean;
    minor: boolean;
    note?: string;
  }[];
  excluded: { file: string; reason: string }[];
  holdingLeftOut: { file: string; reason: string }[];
  calibrationSha256: string;
}

test('free-motion takes and rollouts holding bottles on a gapped cell → sysid fit: held-out errors fall, the hand and the object mass move toward the cell truth', {
  timeout: 2_400_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sysid-cell-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = async (args: string[], timeoutMs?: number) => {
    const r = await runTandem(args, { cwd: dir, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
    assert.equal(r.code, 0, `${args.slice(0, 2).join(' ')}: exit ${r.code}: ${r.stderr}`);
    return r;
  };
  await run([
    'layouts',
    'sample',
    '--task',
    'bottles-in-the-bin',
    '--tiers',
    '1',
    '--per-tier',
    '3',
    '--seed',
    '17',
    '-o',
    'set.json',
  ]);
  writeFileSync(join(dir, 'cell.json'), JSON.stringify({ type: 'yam-cell', gap: `seed:${GAP}`, clock: 'virtual' }));
  await run(['sysid', 'excite', '--seconds', '60', '--seed', '1', '-o', 'traj.json']);
  await run([
    'teleop',
    'record',
    '--leader',
    'emulated-yam',
    '--follower',
    'cell.json',
    '--task',
    'bottles-in-the-bin',
    '--empty-table',
    '--trajectory',
    'traj.json',
    '--episodes',
    '3',
    '--seconds',
    '6',
    '--reset',
    '0.5',
    '--out',
    'takes',
    '--data',
    'data',
  ]);
  // Two rollouts, one fitted and one held out: a second fitted rollout (layout 1) cost a rollout
  // and doubled the objects' stage (fit 82 → 50 CPU-s without it) for results the asserts cannot
  // tell apart (held out 35.9 → 6.3 mrad either way; hand 0.60 against 0.60; object mass 1.16
  // instead of 1.17 against 1.18; holding 15.2 → 5.7 mrad instead of 5.6).
  for (const layout of ['0', '2']) {
    await run([
      'rig',
      'rollout',
      '--rig-config',
      'cell.json',
      '--layouts',
      'set.json',
      '--layout',
      layout,
      '--policy',
      'code:bottles-in-the-bin',
      '--seconds',
      '19',
      '--episodes',
      'rollouts',
      '--data',
      'data',
      '--json',
    ]);
  }
  // Named so that the fit holds out the last two by name: a rollout holding its bottle (b-hold-1)
  // and a free take (c-free-0); it fits on two free takes and one rollout.
  mkdirSync(join(dir, 'fit'));
  const copy = (from: string, names: (k: number) => string): string[] =>
    existsSync(join(dir, from))
      ? readdirSync(join(dir, from))
          .filter((f) => f.endsWith('.mcap'))
          .sort()
          .map((f, k) => {
            copyFileSync(join(dir, from, f), join(dir, 'fit', `${names(k)}.mcap`));
            return `fit/${names(k)}.mcap`;
          })
      : [];
  const files = [
    ...copy('takes', (k) => (k < 2 ? `a-free-${k}` : `c-free-${k - 2}`)),
    ...copy('rollouts', (k) => `b-hold-${k}`),
  ];
  assert.equal(files.length, 5, `3 takes and 2 rollouts: ${files.join(', ')}`);
  // One start instead of three, on 2 workers so the descent is the same on every machine (the LM
  // tries one step size per worker), at 5 iterations: the joints' error falls little after the
  // fifth (2.96 → 2.88 mrad by the eighth) and the object mass is where 8 put it (1.16 vs 1.15);
  // at 4 (tried with a second fitted rollout) the object mass overshot (1.28 against 1.18) and
  // joint 2's torque missed.
  // 4 s of each fitted episode instead of 6: a third less physics (116 → 75 CPU-s), and the
  // results the asserts read barely move (held out 35.9 → 6.3 mrad instead of 5.5; hand 0.60
  // instead of 0.51 against 0.60; object mass 1.17 instead of 1.22 against 1.18).
  const fit = await run(
    [
      'sysid',
      'fit',
      '--layouts',
      'set.json',
      ...files,
      '--holdout',
      '2',
      '--starts',
      '1',
      '--iterations',
      '5',
      '--fit-seconds',
      '4',
      '--workers',
      '2',
      '-o',
      'fit.json',
      '--plot',
      'fit.svg',
      '--json',
    ],
    900_000,
  );
  const r = JSON.parse(fit.stdout) as FitJson;
  // Every take is usable and every rollout held its bottle in the replay (what `sysid check` says).
  assert.deepEqual(r.excluded, [], 'every take is usable');
  assert.deepEqual(r.holdingLeftOut, [], 'every rollout holds its bottle throughout its replay');
  const p = Object.fromEntries(r.parameters.map((x) => [x.name, x]));
  const truth = cellTruth({ kind: 'seed', seed: GAP }).truth;
  const truthOf = (name: string): number => {
    const m = /^joint(\d)\.(\w+)$/.exec(name);
    if (m) {
      const j = Number(m[1]) - 1;
      return m[2] === 'motorTorqueScale'
        ? truth.motorTorqueScale[j]
        : (truth.physics.joints[j] as unknown as Record<string, number>)[m[2]];
    }
    if (name === 'commandLatencyS') return truth.replyLatencyMs / 1000;
    if (name === 'fingerReflectedMassKg') return truth.physics.fingerReflectedMassKg ?? 0;
    if (name === 'objectMassScale') return truth.physics.objectMassScale;
    throw new Error(`no truth for ${name}`);
  };
  const identified = r.parameters.filter((x) => x.identified);
  t.diagnostic(
    `held out: ${(r.heldOut.beforeAll * 1000).toFixed(2)} → ${(r.heldOut.afterAll * 1000).toFixed(2)} mrad; holding ${r.heldOut.holding?.before} → ${r.heldOut.holding?.after}`,
  );
  t.diagnostic(
    `identified: ${identified.map((x) => `${x.name} ${x.start} → ${x.fitted.toPrecision(3)} ± ${x.sigma.toPrecision(2)} (truth ${truthOf(x.name).toPrecision(3)})`).join('; ')}`,
  );
  // Held-out tracking error (the free take and the rollout, all joints) at least halves.
  assert.ok(
    r.heldOut.afterAll <= r.heldOut.beforeAll / 2,
    `held-out RMS ${r.heldOut.beforeAll} → ${r.heldOut.afterAll}`,
  );
  // The gap's largest arm part, the hand's reflected mass: found, within a quarter of the truth (runs: 0.62 against 0.60).
  const reflected = p.fingerReflectedMassKg;
  assert.ok(
    reflected.identified && Math.abs(reflected.fitted - truthOf(reflected.name)) < 0.25 * truthOf(reflected.name),
    `reflected mass ${reflected.fitted}`,
  );
  // The parameters that carry the gap, when identified: each closer to the truth than it started,
  // or within 3σ of it. Not asserted one by one: the wrist's small damping and armature terms. On
  // the cell they come out "identified" yet several σ off, consistently across takes — they soak up
  // what the twin does not model (the MIT frames' quantisation, the adapters' reply timing); docs/sysid.md says so.
  for (const x of identified.filter((q) =>
    /^(fingerReflectedMassKg|joint[234]\.motorTorqueScale|commandLatencyS)$/.test(q.name),
  )) {
    const tv = truthOf(x.name);
    assert.ok(
      Math.abs(x.fitted - tv) <= Math.max(3 * x.sigma, Math.abs(x.start - tv)),
      `${x.name}: ${x.fitted} ± ${x.sigma} is neither closer to the truth ${tv} than ${x.start} nor within 3σ of it`,
    );
  }
  // The object mass: identified, and at least halfway from the catalogue to the truth (runs: 1.17 against 1.18).
  const mass = p.objectMassScale;
  assert.ok(mass.identified, `objectMassScale not identified: ${mass.note ?? ''}`);
  assert.ok(
    Math.abs(mass.fitted - truthOf(mass.name)) < Math.abs(mass.start - truthOf(mass.name)) / 2,
    `objectMassScale ${mass.fitted}, truth ${truthOf(mass.name)}`,
  );
  // On the held-out rollout, while it holds the bottle, the pitch joints track at least twice as well.
  const h = r.heldOut.holding;
  assert.ok(h && h.after < h.before / 2, `held-out holding RMS ${h?.before} → ${h?.after}`);
  // What the takes do not identify keeps the start record's value and is named with the reason.
  for (const name of ['gripperMaxForceN', 'objectFrictionScale', 'fingerFriction']) {
    if (!p[name].identified) assert.equal(p[name].fitted, p[name].start, name);
  }
  // The record is one `--calibration` takes, and the plot names the joint it shows.
  const cal = await run(['sim', 'calibration', '--calibration', 'fit.json']);
  assert.match(cal.stderr + cal.stdout, new RegExp(r.calibrationSha256));
  const svg = readFileSync(join(dir, 'fit.svg'), 'utf8');
  assert.match(svg, /^<svg[\s\S]*(left|right)_joint\d on held-out [\s\S]*<\/svg>$/);
});
