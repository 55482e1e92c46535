/**
 * The sim-twin drift alarm in `tandem report`, on a real store file: three policies, a sim sweep,
 * and real evaluations on later days — the first agrees with the sim, then two policies swap
 * places on the rig. The report says since when the sim no longer ranks like the rig, and a new
 * sim calibration that matches the rig again clears it. r and MMRV are recomputed here from their
 * textbook definitions on the per-policy means, not read from the output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';
import { serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { DEFAULT_RIG_CONFIG } from '../../src/app/rig-registry.js';
import {
  AS_SIM,
  CAL_A,
  CAL_B,
  DRIFT_SET,
  DRIFT_SPECS,
  fillDriftStore,
  SWAPPED,
  sweep,
} from '../helpers/drift-store.js';
import { runInProcess as tandem } from '../helpers/cli.js';

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Pearson r by the computational formula (n·Σxy − Σx·Σy) / √((n·Σx² − (Σx)²)(n·Σy² − (Σy)²)). */
function pearsonR(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const sx = x.reduce((a, b) => a + b, 0);
  const sy = y.reduce((a, b) => a + b, 0);
  const sxy = x.reduce((a, v, i) => a + v * y[i], 0);
  const sxx = x.reduce((a, v) => a + v * v, 0);
  const syy = y.reduce((a, v) => a + v * v, 0);
  return (n * sxy - sx * sy) / Math.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
}
/** MMRV (SIMPLER): per policy the largest |real gap| to a policy sim orders the other way (strictly), averaged. */
function mmrvOf(sim: readonly number[], real: readonly number[]): number {
  return mean(
    sim.map((_, i) =>
      Math.max(0, ...sim.map((__, j) => (sim[i] > sim[j] !== real[i] > real[j] ? Math.abs(real[i] - real[j]) : 0))),
    ),
  );
}

type Point = {
  evaluation: { name: string; sessionId: number };
  window: string[];
  pairs: { policy: string; sim: number; real: number }[];
  pearson: number | null;
  mmrv: number | null;
  meanAbsGap: number;
  status: string;
};
type Drift = {
  simCalibration: string;
  points: Point[];
  alarm: { sinceAt: string; metrics: string[]; sentence: string } | null;
  sentence: string;
};

test('tandem report tracks sim–real agreement per evaluation and says since when the sim no longer ranks like the rig; a matching recalibration clears it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-drift-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(DRIFT_SET));
  const data = join(dir, 'data');
  mkdirSync(data);
  const { sessions, policyIds } = fillDriftStore(join(data, 'tandem.sqlite'));
  // One policy in the report: the drift is the twin's, over every policy on the set.
  const r = await tandem(
    [
      'report',
      '--policies',
      DRIFT_SPECS[0],
      '--layouts',
      'set.json',
      '-o',
      'out.html',
      '--json',
      '--drift-window',
      '1',
      '--data',
      data,
    ],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const drift = JSON.parse(r.stdout).simDrift as Drift;
  assert.equal(drift.simCalibration, CAL_A.sha256);
  assert.deepEqual(
    drift.points.map((p) => [p.evaluation.sessionId, p.status]),
    [
      [sessions[0], 'ok'],
      [sessions[1], 'drift'],
      [sessions[2], 'drift'],
    ],
  );
  const simMeans = AS_SIM.map(mean);
  const swappedMeans = SWAPPED.map(mean);
  const p2 = drift.points[1];
  assert.deepEqual(
    p2.pairs.map((p) => [p.sim, p.real]),
    simMeans.map((s, i) => [s, swappedMeans[i]]),
  );
  assert.ok(Math.abs(p2.pearson! - pearsonR(simMeans, swappedMeans)) < 1e-12, `r ${p2.pearson}`);
  assert.ok(Math.abs(p2.mmrv! - mmrvOf(simMeans, swappedMeans)) < 1e-12, `MMRV ${p2.mmrv}`);
  assert.ok(Math.abs(p2.meanAbsGap - mean(simMeans.map((s, i) => Math.abs(s - swappedMeans[i])))) < 1e-12);
  assert.equal(drift.points[0].pearson, 1);
  assert.equal(drift.points[0].mmrv, 0);
  // r 0.5 < 0.7 and MMRV 0.17 > 0.15; the mean gap (0.17) is within 0.25.
  assert.deepEqual(drift.alarm!.metrics, ['pearson', 'mmrv']);
  assert.equal(drift.alarm!.sinceAt.slice(0, 10), '2026-11-03');
  const sentence = `The sim no longer ranks like the rig since session ${sessions[1]} (2026-11-03): Pearson r 0.50 < 0.7, MMRV 0.17 > 0.15 over session ${sessions[2]}; recalibrate with tandem sysid.`;
  assert.equal(drift.alarm!.sentence, sentence);
  const text = await tandem(
    [
      'report',
      '--policies',
      DRIFT_SPECS[0],
      '--layouts',
      'set.json',
      '-o',
      'out.html',
      '--drift-window',
      '1',
      '--data',
      data,
    ],
    dir,
  );
  assert.ok(text.stdout.split('\n').includes(sentence), text.stdout);
  assert.match(
    readFileSync(join(dir, 'out.html'), 'utf8'),
    /<h2>9\. Is the sim twin drifting\?<\/h2>\n<p class="warn note">The sim no longer ranks like the rig since session/,
  );

  // The default window pools three evaluations: the last point is all three sessions' real results.
  const pooled = JSON.parse(
    (
      await tandem(
        ['report', '--policies', DRIFT_SPECS[0], '--layouts', 'set.json', '-o', 'out.html', '--json', '--data', data],
        dir,
      )
    ).stdout,
  ).simDrift as Drift;
  const last = pooled.points.at(-1)!;
  assert.deepEqual(
    last.window,
    sessions.map((s) => `session ${s}`),
  );
  const pooledReal = AS_SIM.map((_, pi) =>
    mean(DRIFT_SET.layouts.map((__, i) => mean([AS_SIM[pi][i], SWAPPED[pi][i], SWAPPED[pi][i]]))),
  );
  last.pairs.forEach((p, i) =>
    assert.ok(Math.abs(p.real - pooledReal[i]) < 1e-12, `${p.policy}: ${p.real} ≠ ${pooledReal[i]}`),
  );
  assert.ok(Math.abs(last.pearson! - pearsonR(simMeans, pooledReal)) < 1e-12);
  assert.ok(Math.abs(last.mmrv! - mmrvOf(simMeans, pooledReal)) < 1e-12);

  // Recalibrated (a sweep with calibration B that ranks as the rig now does): the newest twin agrees, no alarm.
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    sweep(store, policyIds, SWAPPED, CAL_B.sha256, '2026-11-05');
  } finally {
    store.close();
  }
  const after = JSON.parse(
    (
      await tandem(
        [
          'report',
          '--policies',
          DRIFT_SPECS[0],
          '--layouts',
          'set.json',
          '-o',
          'out.html',
          '--json',
          '--drift-window',
          '1',
          '--sim-calibration',
          CAL_B.sha256,
          '--data',
          data,
        ],
        dir,
      )
    ).stdout,
  ).simDrift as Drift;
  assert.equal(after.simCalibration, CAL_B.sha256);
  assert.deepEqual(
    after.points.map((p) => p.status),
    ['drift', 'ok', 'ok'],
    'against the new twin the first session is the odd one out',
  );
  assert.equal(after.alarm, null);
  assert.match(
    after.sentence,
    new RegExp(
      `^The sim agrees with the rig after session ${sessions[2]} \\(2026-11-04\\): Pearson r 1\\.00, MMRV 0\\.00, mean \\|sim − real\\| 0\\.00 over 3 policies, within the thresholds\\.$`,
    ),
  );
});

test('drift thresholds: from the station config or --drift-* flags; a bad value is one sentence and exit 2', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-drift-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(DRIFT_SET));
  const data = join(dir, 'data');
  mkdirSync(data);
  fillDriftStore(join(data, 'tandem.sqlite'));
  const base = [
    'report',
    '--policies',
    DRIFT_SPECS[0],
    '--layouts',
    'set.json',
    '-o',
    'out.html',
    '--json',
    '--data',
    data,
  ];
  // Looser thresholds in the station config: r 0.5 and MMRV 0.17 are within them.
  writeFileSync(
    join(dir, 'station.json'),
    JSON.stringify({
      version: 1,
      rig: DEFAULT_RIG_CONFIG,
      simDrift: { minPearson: 0.4, maxMmrv: 0.2, windowEvaluations: 1 },
    }),
  );
  const loose = await tandem([...base, '--station-config', 'station.json'], dir);
  assert.equal(loose.code, 0, loose.stderr);
  const d = JSON.parse(loose.stdout).simDrift as Drift & { thresholds: Record<string, number> };
  assert.deepEqual(d.thresholds, { minPearson: 0.4, maxMmrv: 0.2, maxMeanAbsGap: 0.25, windowEvaluations: 1 });
  assert.equal(d.alarm, null);
  // A flag wins over the config.
  const strict = JSON.parse(
    (await tandem([...base, '--station-config', 'station.json', '--drift-max-mmrv', '0.1'], dir)).stdout,
  ).simDrift as Drift;
  assert.deepEqual(strict.alarm?.metrics, ['mmrv']);

  const bad = await tandem([...base, '--drift-min-r', 'high'], dir);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.trim(), "--drift-min-r must be a number from -1 to 1, e.g. --drift-min-r 0.7, not 'high'.");
  const window = await tandem([...base, '--drift-window', '0'], dir);
  assert.equal(window.code, 2);
  assert.match(
    window.stderr,
    /^--drift-window must be a whole number of evaluations of at least 1, e.g. --drift-window 3, not '0'\.\n$/,
  );
  writeFileSync(
    join(dir, 'bad.json'),
    JSON.stringify({ version: 1, rig: DEFAULT_RIG_CONFIG, simDrift: { maxMmrv: 2, minR: 0.5 } }),
  );
  const badConfig = await tandem([...base, '--station-config', 'bad.json'], dir);
  assert.equal(badConfig.code, 2);
  assert.match(
    badConfig.stderr,
    /^The station config .*bad\.json is wrong: 'simDrift' has 'minR', which is not a drift threshold \(minPearson, maxMmrv, maxMeanAbsGap, windowEvaluations\)\.\n$/,
  );
});
