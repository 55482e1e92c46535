/**
 * Per-object times to success, units per hour and mean time between failures in `tandem report`,
 * from a real store file: sim and cell rollouts timed by their task events, a hardware session
 * rollout by the operator's "object done" marks, one rollout with no times at all. Every expected
 * number is worked out by hand from the rows written here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import {
  simCalibrationHash,
  simCalibrationJson,
  DEFAULT_SIM_CALIBRATION,
  SIM_CALIBRATION_KIND,
} from '../../src/sim/calibration.js';
import type { TaskEvent } from '../../src/tasks/task-events.js';
import { runInProcess as tandem } from '../helpers/cli.js';

// Layout 0: bottle-1, bottle-2, bottle-3; layout 1: bottle-1, bottle-2.
const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [3], perTier: 2, seed: 5 });
const SPEC = 'code:bottles-in-the-bin';
const EPISODE_S = 20;

const into = (timeS: number, objectId: string): TaskEvent => ({
  timeS,
  kind: 'entered-region',
  objectId,
  region: 'bin',
});
const outOf = (timeS: number, objectId: string): TaskEvent => ({ timeS, kind: 'left-region', objectId, region: 'bin' });
const progress = (timeS: number, done: number, total: number, delta: number): TaskEvent => ({
  timeS,
  kind: 'progress',
  done,
  total,
  delta,
});

function fillStore(dir: string): { data: string; ids: Record<string, number> } {
  const data = join(dir, 'data');
  mkdirSync(data);
  const store = openStore(join(data, 'tandem.sqlite'));
  const ids: Record<string, number> = {};
  try {
    store.putLayoutSet(set);
    const cal = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
    store.putCalibration({
      sha256: cal,
      kind: SIM_CALIBRATION_KIND,
      version: DEFAULT_SIM_CALIBRATION.version,
      canonicalJson: simCalibrationJson(DEFAULT_SIM_CALIBRATION),
    });
    const p = store.upsertPolicy({ spec: SPEC, name: SPEC, checkpointSha256: null });
    const common = {
      policyId: p.id,
      layoutSetSha256: set.sha256,
      episodeSeconds: EPISODE_S,
      controlHz: 50,
      status: 'valid' as const,
    };
    // Sim, layout 0: bottle-1 in at 2 s; bottle-2 in at 5 s, knocked out at 6 s, back in at 9 s; bottle-3 never. Done 2 of 3.
    ids.s1 = store.insertRollout({
      ...common,
      kind: 'sim',
      layoutIndex: 0,
      progress: 2 / 3,
      calibrationSha256s: [cal],
      durationS: 3,
      counts: {
        inBin: 2,
        target: 3,
        offTable: 0,
        'objects:done:bottle-500ml': 2,
        'objects:left-undone:bottle-500ml': 1,
      },
      taskEvents: [
        into(2, 'bottle-1'),
        progress(2, 1, 3, 1),
        into(5, 'bottle-2'),
        progress(5, 2, 3, 1),
        outOf(6, 'bottle-2'),
        progress(6, 1, 3, -1),
        into(9, 'bottle-2'),
        progress(9, 2, 3, 1),
      ],
    });
    // Sim, layout 1: bottle-2 in at 3 s, bottle-1 at 6 s. Done 2 of 2.
    ids.s2 = store.insertRollout({
      ...common,
      kind: 'sim',
      layoutIndex: 1,
      progress: 1,
      calibrationSha256s: [cal],
      durationS: 3,
      counts: { inBin: 2, target: 2, offTable: 0, 'objects:done:bottle-500ml': 2 },
      taskEvents: [into(3, 'bottle-2'), progress(3, 1, 2, 1), into(6, 'bottle-1'), progress(6, 2, 2, 1)],
    });
    const endStates = (layout: number, inBin: readonly string[]) =>
      set.layouts[layout].objects.map((o) => (inBin.includes(o.id) ? { id: o.id, region: 'bin' } : { id: o.id }));
    // Real with a table watcher (the cell's events), layout 0: bottle-3 in at 4 s. Scored 1 of 3.
    ids.r1 = store.insertRollout({
      ...common,
      kind: 'real',
      layoutIndex: 0,
      durationS: 21,
      taskEvents: [into(4, 'bottle-3'), progress(4, 1, 3, 1)],
    });
    store.insertOperatorScore({
      rolloutId: ids.r1,
      endStates: endStates(0, ['bottle-3']),
      progress: 1 / 3,
      counts: { inBin: 1, target: 3 },
      operator: 'test',
    });
    // Real on hardware, in a session: no events; the operator marked at 7 s, 1 s (an object that
    // then came out again) and 3 s; scored 2 of 2, so the last two marks are its times: 3 s and 7 s.
    const session = store.createSession({ kind: 'real-eval', operator: 'test' });
    // The operator took over twice with the leader arm (an assisted rollout), the second time to the end.
    ids.r2 = store.insertRollout({
      ...common,
      kind: 'real',
      sessionId: session.id,
      layoutIndex: 1,
      durationS: 21,
      takeovers: [
        { startS: 2, endS: 4.5, open: false },
        { startS: 12, endS: 20, open: true },
      ],
    });
    const j = (action: string, extra: { rolloutId?: number; detail?: Record<string, unknown> } = {}) =>
      store.appendSessionJournal({ sessionId: session.id, slot: 0, attempt: 0, action, ...extra });
    j('shown');
    j('placed');
    j('running');
    for (const tS of [7, 1, 3]) j('object-done', { detail: { tS } });
    // The placement check measured its worst object 4.2 mm off before it started.
    j('ran', {
      rolloutId: ids.r2,
      detail: {
        status: 'valid',
        placement: { checked: true, maxErrorMm: 4.2, maxErrorDeg: 1.5, calibrationSha256: '0'.repeat(64) },
      },
    });
    j('scored', { rolloutId: ids.r2 });
    store.insertOperatorScore({
      rolloutId: ids.r2,
      endStates: endStates(1, ['bottle-1', 'bottle-2']),
      progress: 1,
      counts: { inBin: 2, target: 2 },
      operator: 'test',
    });
    // Real, outside any session, no events: scored 1 of 2, with no time for it.
    ids.r3 = store.insertRollout({ ...common, kind: 'real', layoutIndex: 1, durationS: 21 });
    store.insertOperatorScore({
      rolloutId: ids.r3,
      endStates: endStates(1, ['bottle-1']),
      progress: 0.5,
      counts: { inBin: 1, target: 2 },
      operator: 'test',
    });
  } finally {
    store.close();
  }
  return { data, ids };
}

const close = (actual: number | null, expected: number, what: string): void =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

test('tandem report: time to success per object from task events and operator marks, units per hour and MTBF beside progress', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-throughput-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
  const { data, ids } = fillStore(dir);
  const r = await tandem(
    ['report', '--policies', SPEC, '--layouts', 'set.json', '-o', 'out.html', '--json', '--data', data],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const [policy] = JSON.parse(r.stdout).policies;
  const sim = policy.throughput.sim;
  const real = policy.throughput.real;

  // Sim: the second unit of layout 0 is done for good at 9 s (its 5 s entry was undone at 6 s).
  type Time = { rolloutId: number; tS: number; objectId: string | null; source: string };
  assert.deepEqual(
    sim.times.map((x: Time) => [x.rolloutId, x.tS, x.objectId]),
    [
      [ids.s1, 2, 'bottle-1'],
      [ids.s2, 3, 'bottle-2'],
      [ids.s2, 6, 'bottle-1'],
      [ids.s1, 9, 'bottle-2'],
    ],
  );
  assert.deepEqual([sim.units, sim.unitsDone, sim.failures], [5, 4, 1]);
  // Busy: layout 0 did not finish (its whole 20 s), layout 1 finished at its last success (6 s).
  close(sim.busyHours, 26 / 3600, 'sim busy hours');
  close(sim.unitsPerHour, 4 / (26 / 3600), 'sim units per hour');
  close(sim.mtbfHours, 26 / 3600 / 1, 'sim MTBF');
  close(sim.medianS, (3 + 6) / 2, 'sim median time to success');
  assert.deepEqual(sim.curve, [
    { tS: 0, fraction: 0 },
    { tS: 2, fraction: 1 / 5 },
    { tS: 3, fraction: 2 / 5 },
    { tS: 6, fraction: 3 / 5 },
    { tS: 9, fraction: 4 / 5 },
  ]);
  assert.equal(sim.halfDoneS, 6);

  // Real: the cell rollout by its events (4 s), the hardware one by the last two of its three marks (3 s, 7 s); the third has none.
  assert.deepEqual(
    real.times.map((x: Time) => [x.rolloutId, x.tS, x.source]),
    [
      [ids.r2, 3, 'operator-marks'],
      [ids.r1, 4, 'task-events'],
      [ids.r2, 7, 'operator-marks'],
    ],
  );
  assert.deepEqual(real.untimedRolloutIds, [ids.r3]);
  assert.deepEqual([real.units, real.unitsDone, real.failures, real.timedRollouts, real.timedUnits], [7, 4, 3, 2, 5]);
  // Busy: 20 s (r1, not finished) + 7 s (r2, finished at its last mark) + 20 s (r3, not finished).
  close(real.busyHours, 47 / 3600, 'real busy hours');
  close(real.unitsPerHour, (4 * 3600) / 47, 'real units per hour');
  close(real.mtbfHours, 47 / 3600 / 3, 'real MTBF');
  close(real.medianS, 4, 'real median');
  // Assists (operator takeovers): two, both in r2, over the same 47 busy seconds; none in the sim.
  assert.deepEqual([real.assists, real.assistedRollouts, sim.assists, sim.mtbaHours], [2, 1, 0, null]);
  close(real.mtbaHours, 47 / 3600 / 2, 'real mean time between assists');
  close(real.assistsPerHour, (2 * 3600) / 47, 'real assists per hour');
  assert.equal(real.halfDoneS, 7, '3 of the 5 timed units are done at 7 s');

  // The placement check as a covariate: only the session rollout carries one (the others ran outside a session).
  assert.deepEqual(policy.placement, {
    rollouts: 1,
    checked: 1,
    unchecked: 0,
    meanMaxErrorMm: 4.2,
    worstMaxErrorMm: 4.2,
    errorProgressR: null,
    sentence: 'placement checked before 1 of 1 rollouts; worst object 4.2 mm off on average, 4.2 mm at most',
  });

  // The text summary says it beside the policy's progress; the HTML has the section and its curve.
  const text = await tandem(
    ['report', '--policies', SPEC, '--layouts', 'set.json', '-o', 'out.html', '--data', data],
    dir,
  );
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /\n {2}real: placement checked before 1 of 1 rollouts; worst object 4\.2 mm off on average, 4\.2 mm at most\n/,
  );
  assert.match(
    text.stdout,
    /\n {2}real: 4\/7 objects, 306 units\/h, MTBF 15\.7 s, 2 assists in 1 rollout \(MTBA 23\.5 s\), median time to success 4\.0 s, half the objects done by 7\.0 s \(1 rollout\(s\) without times\)/,
  );
  const html = readFileSync(join(dir, 'out.html'), 'utf8');
  assert.match(html, /<h2>7\. Throughput and time to success<\/h2>/);
  assert.match(html, /<th>mean time between assists<\/th>/);
  // The placement errors in the HTML too, beside the text's sentence.
  assert.match(html, /<h3>Placement before start<\/h3>/);
  assert.match(
    html,
    /<tr><td class="l">[^<]+<\/td><td>1\/1<\/td><td>0<\/td><td>4\.2 mm<\/td><td>4\.2 mm<\/td><td>–<\/td><\/tr>/,
  );
  assert.match(html, /<td>2 in 1 \(153\/h\)<\/td><td>[^<]+<\/td>/);
  assert.match(html, /aria-label="Time to success: share of objects done by each second of the episode"/);
});
