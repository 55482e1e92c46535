import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { openStore } from '../../src/store/store.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import {
  simCalibrationHash,
  simCalibrationJson,
  DEFAULT_SIM_CALIBRATION,
  SIM_CALIBRATION_KIND,
} from '../../src/sim/calibration.js';
import { RANDOMIZATION_KIND } from '../../src/sim/randomization.js';
import { calibrationFixture } from '../store/fixture-data.js';
import { runInProcess as tandem } from '../helpers/cli.js';

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 3], perTier: 4, seed: 21 });
const SPECS = ['code:bottles-in-the-bin', 'code:bottles-in-the-bin?skill=0.5', 'code:bottles-in-the-bin?skill=0'];

/**
 * A store as sweeps and scored cell rollouts leave it: for each policy, sim on all 8 layouts (3
 * repeats), real (scored, with end states) on the first 5; every bottle, about half, about a third. Returns the data dir.
 */
function fillStore(
  dir: string,
  opts: {
    randomized?: boolean;
    otherSimCalibration?: boolean;
    unscored?: boolean;
    session?: boolean;
    simSeconds?: (layout: number, repeat: number) => number;
    realSeconds?: number;
  } = {},
): string {
  const data = join(dir, 'data');
  mkdirSync(data);
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    store.putLayoutSet(set);
    const cal = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
    store.putCalibration({
      sha256: cal,
      kind: SIM_CALIBRATION_KIND,
      version: DEFAULT_SIM_CALIBRATION.version,
      canonicalJson: simCalibrationJson(DEFAULT_SIM_CALIBRATION),
    });
    const other = calibrationFixture(SIM_CALIBRATION_KIND, 99, { physicsStepS: 0.004 });
    store.putCalibration(other);
    // opts.randomized: every sim rollout ran its own drawn record, linked with the spec it was drawn from (as sim sweep --randomize stores them).
    const spec = calibrationFixture(RANDOMIZATION_KIND, 1, {
      format: 'tandem.randomization/1',
      seed: 3,
      physics: { tableFriction: [0.3, 0.9] },
    });
    if (opts.randomized) store.putCalibration(spec);
    let draws = 0;
    const simCalibrations = (i: number, rep: number): string[] => {
      if (!opts.randomized) return [opts.otherSimCalibration && i === 7 && rep === 0 ? other.sha256 : cal];
      const drawn = calibrationFixture(SIM_CALIBRATION_KIND, 1, {
        drawn: (draws += 1),
        tableFriction: 0.3 + draws / 100,
      });
      store.putCalibration(drawn);
      return [drawn.sha256, spec.sha256];
    };
    // With opts.session, the first policy's real rollouts ran in an evaluation session whose journal timed the operator.
    const session = opts.session ? store.createSession({ kind: 'real-eval', operator: 'test' }) : undefined;
    SPECS.forEach((spec, pi) => {
      const p = store.upsertPolicy({ spec, name: spec, checkpointSha256: null });
      set.layouts.forEach((layout, i) => {
        const n = layout.objects.length;
        const clipped = [n, Math.min(n, Math.floor(n / 2) + (i % 2)), i % 3 === 0 ? 1 : 0][pi];
        for (let rep = 0; rep < 3; rep++) {
          store.insertRollout({
            kind: 'sim',
            policyId: p.id,
            layoutSetSha256: set.sha256,
            layoutIndex: i,
            repeatIndex: rep,
            episodeSeconds: opts.simSeconds?.(i, rep) ?? 20,
            controlHz: 50,
            status: 'valid',
            progress: clipped / n,
            counts: {
              inBin: clipped,
              target: n,
              offTable: 0,
              'objects:done:bottle-500ml': clipped,
              'objects:knocked-over:bottle-500ml': n - clipped,
            },
            calibrationSha256s: simCalibrations(i, rep),
            durationS: 5,
          });
        }
        if (i < 5) {
          const inSession = session && pi === 0 ? session.id : undefined;
          const id = store.insertRollout({
            kind: 'real',
            sessionId: inSession ?? null,
            policyId: p.id,
            layoutSetSha256: set.sha256,
            layoutIndex: i,
            episodeSeconds: opts.realSeconds ?? 20,
            controlHz: 50,
            status: 'valid',
            durationS: 21,
          });
          if (inSession !== undefined) journalSlot(store, inSession, i, id);
          const realDone = pi === 0 && i === 0 ? n - 1 : clipped;
          const endStates = layout.objects.map((o, k) =>
            k < realDone
              ? { id: o.id, region: 'bin' }
              : { id: o.id, upright: o.posture === 'upright' ? false : undefined },
          );
          if (!(opts.unscored && i === 4))
            store.insertOperatorScore({
              rolloutId: id,
              endStates,
              progress: realDone / n,
              counts: { inBin: realDone, target: n },
              operator: 'test',
            });
        }
      });
    });
  } finally {
    store.close();
  }
  return data;
}

/**
 * One slot's journal with known times: placed after 40 s (journalled), the rig ran 25 s after the
 * confirm (timestamps), scored in 12 s, reset in 20 + slot s: 97 + slot operator seconds.
 */
function journalSlot(store: ReturnType<typeof openStore>, sessionId: number, slot: number, rolloutId: number): void {
  const t0 = Date.parse('2026-12-01T09:00:00Z') + slot * 600_000;
  const at = (s: number): string => new Date(t0 + s * 1000).toISOString();
  const j = (action: string, s: number, extra: { operatorS?: number; rolloutId?: number } = {}) =>
    store.appendSessionJournal({ sessionId, slot, attempt: 0, action, at: at(s), ...extra });
  j('shown', 0);
  j('placed', 40, { operatorS: 40 });
  j('running', 40.5);
  j('ran', 65, { rolloutId });
  j('scored', 77, { operatorS: 12, rolloutId });
  j('reset', 97 + slot, { operatorS: 20 + slot });
}

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-report-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
  return dir;
}

test('tandem report writes one self-contained HTML file, PNG figures, and JSON whose numbers trace to rollout ids', async (t) => {
  const dir = tempDir(t);
  const data = fillStore(dir);
  const r = await tandem(
    [
      'report',
      '--policies',
      SPECS.join(','),
      '--layouts',
      'set.json',
      '-o',
      'out.html',
      '--png',
      'figs',
      '--json',
      '--data',
      data,
    ],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout);
  assert.equal(json.layoutSet, set.sha256);
  assert.equal(json.policies.length, 3);
  // The order the levels set is recovered on both sides, and sim ranks them as real does.
  const real = json.policies.map(
    (p: { real: { tiers: { meanProgress: number }[] } }) => p.real.tiers.at(-1)!.meanProgress,
  );
  assert.ok(real[0] > real[1] && real[1] > real[2], `real means ${real}`);
  assert.equal(json.correlation.mmrv.value, 0);
  // Every real rollout behind a policy's real number is a stored real rollout of that policy on a paired layout.
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    for (const p of json.policies) {
      for (const id of p.real.rolloutIds) {
        const row = store.getRollout(id)!;
        assert.equal(row.kind, 'real');
        assert.equal(store.getPolicy(row.policyId)!.spec, p.spec);
      }
      const fromIds = p.real.rolloutIds.map((id: number) => store.getRollout(id)!.effectiveProgress!);
      assert.ok(
        Math.abs(
          fromIds.reduce((a: number, b: number) => a + b, 0) / fromIds.length - p.real.tiers.at(-1).meanProgress,
        ) < 1e-12,
      );
    }
  } finally {
    store.close();
  }
  // Cost: 5 real rollouts of 21 s each, at the stated defaults: robot 21·5 s at 20/h, operator (21 + 90)·5 s at 50/h.
  const cost = json.policies[0].cost;
  assert.ok(Math.abs(cost.realCost - ((105 / 3600) * 20 + (555 / 3600) * 50)) < 1e-9);
  assert.ok(Math.abs(cost.cpuCoreHours - (24 * 5) / 3600) < 1e-12);
  // The failure breakdown is there with its sim and real sides.
  assert.ok(
    json.failures.rows.some(
      (f: { pattern: string; sim: { objects: number }; real: { objects: number } }) =>
        f.pattern === 'knocked-over' && f.sim.objects > 0 && f.real.objects > 0,
    ),
  );

  const html = readFileSync(join(dir, 'out.html'), 'utf8');
  assert.doesNotMatch(html, /<script|<link|src=|@import|url\(http/i, 'nothing loaded from anywhere');
  assert.equal(html.match(/<svg /g)?.length, 4, 'scatter, tiers, control variate, cost');
  assert.match(html, /MMRV = 0\.000/);
  assert.match(html, /left undone \(never grasped or dropped in transit\)|knocked over/);
  for (const name of ['sim-vs-real', 'tiers', 'control-variate', 'cost']) {
    const meta = await sharp(join(dir, 'figs', `${name}.png`)).metadata();
    assert.equal(meta.format, 'png');
    assert.ok((meta.width ?? 0) >= 1000, `${name}.png is ${meta.width} px wide`);
  }
});

test('bad input: mixed sim calibrations, unknown policies, bad cost files get one sentence; unscored real rollouts are listed, not counted', async (t) => {
  const dir = tempDir(t);
  const data = fillStore(dir, { otherSimCalibration: true, unscored: true });
  const mixed = await tandem(['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '--data', data], dir);
  assert.equal(mixed.code, 2, mixed.stderr);
  assert.match(
    mixed.stderr,
    /The sim rollouts of these policies ran with 2 different calibrations \(.*\); one comparison uses one: pick it with --sim-calibration SHA256\./,
  );
  assert.ok(!existsSync(join(dir, 'report.html')), 'no report when the comparison is refused');
  const cal = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
  const chosen = await tandem(
    ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '--sim-calibration', cal, '--data', data],
    dir,
  );
  assert.equal(chosen.code, 0, chosen.stderr);
  assert.match(chosen.stdout, /Not counted: 3 real rollout\(s\) await an operator score/);
  assert.match(chosen.stdout, /Not counted: 3 rollout\(s\) with another calibration/);
  assert.match(
    readFileSync(join(dir, 'report.html'), 'utf8'),
    /3 real rollout\(s\) await an operator score and are not counted/,
  );

  const unknown = await tandem(['report', '--policies', 'code:nope', '--layouts', 'set.json', '--data', data], dir);
  assert.match(unknown.stderr, /There is no policy 'code:nope' in the store .*; known specs: code:bottles-in-the-bin/);
  writeFileSync(join(dir, 'cost.json'), '{"operatorPerHour": -3}');
  const badCost = await tandem(
    ['report', '--policies', SPECS[0], '--layouts', 'set.json', '--cost', 'cost.json', '--data', data],
    dir,
  );
  assert.match(badCost.stderr, /operatorPerHour must be a number ≥ 0, not -3/);
  const two = await tandem(
    [
      'report',
      '--policies',
      SPECS.slice(0, 2).join(','),
      '--layouts',
      'set.json',
      '--sim-calibration',
      cal,
      '--data',
      data,
    ],
    dir,
  );
  assert.equal(two.code, 0, two.stderr);
  assert.match(
    two.stdout,
    /Correlating sim with real needs at least 3 policies with paired results; only .* have them\./,
  );
});

test('a randomized sweep pairs as one condition — the spec its worlds were drawn from — not one calibration per drawn world', async (t) => {
  const dir = tempDir(t);
  const data = fillStore(dir, { randomized: true });
  const r = await tandem(
    ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '--data', data, '--json'],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as {
    simCalibration: string;
    policies: { sim: { rollouts?: number } }[];
    choices: { simCalibrations: { value: string; rollouts: number }[] };
  };
  const store = openStore(join(data, 'tandem.sqlite'));
  let specSha: string;
  try {
    specSha = store.latestCalibration(RANDOMIZATION_KIND)!.sha256;
  } finally {
    store.close();
  }
  assert.equal(report.simCalibration, specSha, 'the comparison names the randomization spec');
  assert.deepEqual(
    report.choices.simCalibrations.map((c) => [c.value, c.rollouts]),
    [[specSha, SPECS.length * set.layouts.length * 3]],
    'all 72 drawn worlds are one choice',
  );
});

test('operator seconds of rollouts run in a session come from its journal; the rest are the stated estimate, marked', async (t) => {
  const dir = tempDir(t);
  const data = fillStore(dir, { session: true });
  const r = await tandem(
    ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '-o', 'out.html', '--json', '--data', data],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout);
  type Op = { id: number; seconds: number; recorded: boolean };
  const first = json.policies[0].cost;
  assert.equal(first.operatorSecondsRecorded, 5);
  // Slot i: 40 s placing + 25 s standing by + 12 s scoring + (20 + i) s resetting.
  const expected = [0, 1, 2, 3, 4].map((i) => 97 + i);
  assert.deepEqual(
    first.operatorSeconds.map((o: Op) => o.seconds),
    expected,
  );
  assert.ok(first.operatorSeconds.every((o: Op) => o.recorded));
  assert.ok(Math.abs(first.operatorHours - expected.reduce((a, b) => a + b, 0) / 3600) < 1e-12);
  // The journal rows behind each number are in the JSON.
  assert.deepEqual(
    json.operatorTime.map((o: { rolloutId: number }) => o.rolloutId),
    first.operatorSeconds.map((o: Op) => o.id),
  );
  assert.deepEqual(
    json.operatorTime.map((o: { placeS: number; superviseS: number; scoreS: number }) => [
      o.placeS,
      o.superviseS,
      o.scoreS,
    ]),
    expected.map(() => [40, 25, 12]),
  );
  // Outside a session: the episode (21 s) plus the 90 s default, marked as an estimate.
  const second = json.policies[1].cost;
  assert.equal(second.operatorSecondsRecorded, 0);
  assert.ok(second.operatorSeconds.every((o: Op) => !o.recorded && o.seconds === 21 + 90));
  const html = readFileSync(join(dir, 'out.html'), 'utf8');
  assert.match(html, /Operator time is what each rollout's evaluation-session journal recorded/);
});

test('rollouts of different episode lengths are never pooled: a 60 s sweep beside 12 s real rollouts is refused in one sentence, and picking one length leaves the other side unpaired', async (t) => {
  const dir = tempDir(t);
  // The sweep ran 60 s episodes, the real rollouts 12 s: different tasks, not a pair.
  const data = fillStore(dir, { simSeconds: () => 60, realSeconds: 12 });
  const mixed = await tandem(
    ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '--json', '--data', data],
    dir,
  );
  assert.equal(mixed.code, 2, mixed.stdout);
  assert.match(
    mixed.stderr,
    /The rollouts of these policies ran with 2 different episode lengths \(12 s: 15 real; 60 s: 72 sim\); one comparison uses one: pick it with --episode-seconds S\./,
  );
  assert.ok(!existsSync(join(dir, 'report.html')), 'no report when the comparison is refused');
  const absent = await tandem(
    ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '--episode-seconds', '30', '--data', data],
    dir,
  );
  assert.equal(absent.code, 2);
  assert.match(absent.stderr, /No rollout of these policies ran 30 s episodes; present: 12 s: 15 real; 60 s: 72 sim\./);
  const real = await tandem(
    [
      'report',
      '--policies',
      SPECS.join(','),
      '--layouts',
      'set.json',
      '--episode-seconds',
      '12',
      '--json',
      '--data',
      data,
    ],
    dir,
  );
  assert.equal(real.code, 0, real.stderr);
  const json = JSON.parse(real.stdout);
  assert.equal(json.segregated.otherEpisodeLength.length, 72);
  assert.deepEqual(
    json.segregated.unpairedPolicies.map((u: { reason: string }) => u.reason),
    SPECS.map(() => 'real rollouts only, no sim sweep on this layout set'),
  );
  assert.equal(json.correlation, null);
  const bad = await tandem(
    ['report', '--policies', SPECS.join(','), '--layouts', 'set.json', '--episode-seconds', 'long', '--data', data],
    dir,
  );
  assert.match(bad.stderr, /--episode-seconds must be a positive number of seconds/);
});

test('with --episode-seconds the rollouts of other lengths are left out, named in one sentence and in --json, never in a number', async (t) => {
  const dir = tempDir(t);
  // Repeat 2 of layouts 0–2 ran 60 s episodes; everything else 20 s.
  const data = fillStore(dir, { simSeconds: (i, rep) => (rep === 2 && i < 3 ? 60 : 20) });
  const r = await tandem(
    [
      'report',
      '--policies',
      SPECS.join(','),
      '--layouts',
      'set.json',
      '--episode-seconds',
      '20',
      '-o',
      'out.html',
      '--json',
      '--data',
      data,
    ],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout);
  assert.equal(json.episodeSeconds, 20);
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    const long = store
      .listRollouts()
      .filter((x) => x.episodeSeconds === 60)
      .map((x) => x.id)
      .sort((a, b) => a - b);
    assert.equal(long.length, 9, '3 policies × 3 layouts');
    assert.deepEqual(
      json.segregated.otherEpisodeLength.map((x: { id: number }) => x.id).sort((a: number, b: number) => a - b),
      long,
    );
    assert.ok(
      json.segregated.otherEpisodeLength.every(
        (x: { kind: string; episodeSeconds: number }) => x.kind === 'sim' && x.episodeSeconds === 60,
      ),
    );
    // None of them is behind any number: not in a side's ids, listed as not counted on its layout with why.
    for (const p of json.policies) {
      for (const side of [p.sim, p.real, p.simAllLayouts])
        for (const id of side.rolloutIds)
          assert.equal(store.getRollout(id)!.episodeSeconds, 20, `rollout ${id} in ${p.spec}`);
      for (const l of p.layouts)
        for (const n of l.notCounted) assert.match(n.why, /ran 60 s episodes, not this comparison's 20 s/);
    }
    assert.deepEqual(json.choices.episodeSeconds, [
      { value: 20, sim: 63, real: 15 },
      { value: 60, sim: 9, real: 0 },
    ]);
  } finally {
    store.close();
  }
  const sentence = json.segregated.otherEpisodeLengthSentence as string;
  assert.match(
    sentence,
    /^Left out: 9 sim rollout\(s\) of 60 s \([\d, ]+\), because this comparison is of 20 s episodes and results of different episode lengths are never pooled\.$/,
  );
  assert.ok(readFileSync(join(dir, 'out.html'), 'utf8').includes(sentence), 'the HTML says it');
  const text = await tandem(
    [
      'report',
      '--policies',
      SPECS.join(','),
      '--layouts',
      'set.json',
      '--episode-seconds',
      '20',
      '-o',
      'out.html',
      '--data',
      data,
    ],
    dir,
  );
  assert.ok(text.stdout.includes(sentence), text.stdout);
});
