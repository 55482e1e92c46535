/**
 * A sweep on each engine shows up in `tandem report`: the same three policies swept on one layout
 * set by Rapier and by MuJoCo (the same sim calibration on each), with real rollouts, stored as
 * sweeps and scored rollouts leave them. The report compares Rapier's with real without asking
 * which calibration, and its JSON, summary and HTML carry each engine's progress, the agreement
 * and the pair the engines order differently.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/app/cli.js';
import { openStore } from '../../src/store/store.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import {
  DEFAULT_SIM_CALIBRATION,
  SIM_CALIBRATION_KIND,
  simCalibrationHash,
  simCalibrationJson,
  withEngine,
} from '../../src/sim/calibration.js';
import type { StoredReport } from '../../src/server/report-data.js';

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 3, seed: 8 });
const SPECS = ['code:bottles-in-the-bin', 'code:bottles-in-the-bin?skill=0.6', 'code:bottles-in-the-bin?skill=0.3'];
const RAPIER = DEFAULT_SIM_CALIBRATION;
const MUJOCO = withEngine(DEFAULT_SIM_CALIBRATION, 'mujoco');
// Rapier and the real rig order the policies best > 0.6 > 0.3; MuJoCo swaps the last two.
const LEVEL = { rapier: [0.9, 0.6, 0.3], mujoco: [0.9, 0.2, 0.4], real: [0.8, 0.5, 0.2] };

function fillStore(data: string): void {
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    store.putLayoutSet(set);
    for (const cal of [RAPIER, MUJOCO])
      store.putCalibration({
        sha256: simCalibrationHash(cal),
        kind: SIM_CALIBRATION_KIND,
        version: cal.version,
        canonicalJson: simCalibrationJson(cal),
      });
    SPECS.forEach((spec, pi) => {
      const p = store.upsertPolicy({ spec, name: ['best', 'skill 0.6', 'skill 0.3'][pi], checkpointSha256: null });
      set.layouts.forEach((layout, i) => {
        for (const [engine, cal] of [
          ['rapier', RAPIER],
          ['mujoco', MUJOCO],
        ] as const) {
          const progress = LEVEL[engine][pi];
          store.insertRollout({
            kind: 'sim',
            policyId: p.id,
            layoutSetSha256: set.sha256,
            layoutIndex: i,
            repeatIndex: 0,
            episodeSeconds: 30,
            controlHz: 50,
            status: 'valid',
            progress,
            counts: { inBin: 0, target: layout.objects.length },
            calibrationSha256s: [simCalibrationHash(cal)],
            durationS: 5,
          });
        }
        if (i < 4) {
          const id = store.insertRollout({
            kind: 'real',
            policyId: p.id,
            layoutSetSha256: set.sha256,
            layoutIndex: i,
            episodeSeconds: 30,
            controlHz: 50,
            status: 'valid',
            durationS: 31,
          });
          store.insertOperatorScore({
            rolloutId: id,
            endStates: layout.objects.map((o) => ({ id: o.id, upright: true })),
            progress: LEVEL.real[pi],
            counts: { inBin: 0, target: layout.objects.length },
            operator: 'test',
          });
        }
      });
    });
  } finally {
    store.close();
  }
}

async function tandem(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    out: (x) => void (stdout += x),
    err: (x) => void (stderr += x),
    env: {},
    cwd,
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}

test('a sweep on each engine shows up in tandem report: progress per engine, r and MMRV between them and against real, the pair they order differently', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cross-engine-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  mkdirSync(data);
  fillStore(data);
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
  const base = ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '-o', 'r.html', '--data', data];

  const json = await tandem([...base, '--json'], dir);
  assert.equal(json.code, 0, json.stderr);
  const r = JSON.parse(json.stdout) as StoredReport;
  // Both engines stored and none asked for: the report compares Rapier's with real.
  assert.equal(r.simCalibration, simCalibrationHash(RAPIER));
  const x = r.crossEngine!;
  assert.ok(x, r.crossEngineUnavailable);
  assert.deepEqual(x.engines, [
    { engine: 'rapier', calibration: simCalibrationHash(RAPIER) },
    { engine: 'mujoco', calibration: simCalibrationHash(MUJOCO) },
  ]);
  assert.equal(x.sameRecordOtherwise, true);
  const all = x.progress.filter((p) => p.tier === 'all');
  const round = (v: number): number => Math.round(v * 1e9) / 1e9;
  assert.deepEqual(
    all.map((p) => [
      p.policy,
      round(p.engines![0].progress),
      round(p.engines![1].progress),
      p.engines![0].layouts,
      round(p.real!.progress),
      p.real!.layouts,
    ]),
    [
      ['best', 0.9, 0.9, 6, 0.8, 4],
      ['skill 0.6', 0.6, 0.2, 6, 0.5, 4],
      ['skill 0.3', 0.3, 0.4, 6, 0.2, 4],
    ],
  );
  assert.deepEqual(
    x.tiers.map((q) => q.tier),
    [1, 2, 'all'],
  );
  const overall = x.tiers.find((q) => q.tier === 'all')!;
  assert.deepEqual(
    [overall.engines.of, overall.engines.against, overall.engines.pairs.length],
    ['mujoco', 'rapier', 3],
  );
  assert.equal(overall.real[0].mmrv, 0, 'Rapier orders the policies as the real rig does');
  assert.equal(
    round(overall.real[1].mmrv!),
    0.2,
    'MuJoCo swaps two policies 0.3 apart on the real rig: (0 + 0.3 + 0.3) / 3',
  );
  assert.deepEqual(
    overall.orderedDifferently.map((d) => [d.a, d.b, d.realSidesWith]),
    [['skill 0.6', 'skill 0.3', 'rapier']],
  );

  const text = await tandem(base, dir);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /Engines: rapier and mujoco order 1 pair of the 3 policies differently \(skill 0\.6 and skill 0\.3\)/,
  );
  assert.match(text.stdout, /skill 0\.6: rapier 0\.60, mujoco 0\.20 \(6 layouts\); real 0\.50/);
  assert.match(
    text.stdout,
    /ordered differently: skill 0\.6 vs skill 0\.3: rapier 0\.60 vs 0\.30, mujoco 0\.20 vs 0\.40; real 0\.50 vs 0\.20, as rapier/,
  );
  const html = readFileSync(join(dir, 'r.html'), 'utf8');
  assert.match(html, /<h2>10\. Does the verdict survive another physics engine\?<\/h2>/);
  assert.match(html, /skill 0\.6 vs skill 0\.3<\/td><td>0\.60 vs 0\.30<\/td><td>0\.20 vs 0\.40<\/td>/);
});
