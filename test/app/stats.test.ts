import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess, runTandem, type CliResult } from '../helpers/cli.js';
import { openStore } from '../../src/store/store.js';
import { layoutSetFixture } from '../store/fixture-data.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-stats-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One sentence on stderr, no stack trace, non-zero exit. */

function assertOneClearSentence(r: CliResult, pattern: RegExp): void {
  assert.notEqual(r.code, 0, `exit code for: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1, `one line, got: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |Error:/);
  assert.match(r.stderr, pattern);
}

const HAND_PAIRS = [
  { policy: 'act-5k', sim: 0.2, real: 0.1 },
  { policy: 'act-20k', sim: 0.4, real: 0.5 },
  { policy: 'pi0', sim: 0.6, real: 0.3 },
];

test('stats correlate prints Pearson r and MMRV, and --json prints exactly {pearson, mmrv, n}', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'pairs.json'), JSON.stringify(HAND_PAIRS));
  // By hand (see test/analysis/correlation.test.ts): r = 0.5, MMRV = 0.4 / 3.
  const text = await runTandem(['stats', 'correlate', '--input', 'pairs.json'], { cwd: dir });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /over 3 policies/);
  assert.match(text.stdout, /Pearson r\s+0\.500/);
  assert.match(text.stdout, /MMRV\s+0\.133/);
  writeFileSync(join(dir, 'bom.json'), `\uFEFF${JSON.stringify(HAND_PAIRS)}`);
  assert.match((await runInProcess(['stats', 'correlate', '--input', 'bom.json'], dir)).stdout, /Pearson r\s+0\.500/);
  const json = await runTandem(['stats', 'correlate', '--input', join(dir, 'pairs.json'), '--json']);
  assert.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), ['pearson', 'mmrv', 'n']);
  assert.ok(Math.abs((parsed.pearson as number) - 0.5) < 1e-12);
  assert.ok(Math.abs((parsed.mmrv as number) - 0.4 / 3) < 1e-12);
  assert.equal(parsed.n, 3);
});

test('stats correlate reports an undefined Pearson r as null, not a division by zero', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'flat.json'), JSON.stringify(HAND_PAIRS.map((p) => ({ ...p, sim: 0.3 }))));
  const json = await runTandem(['stats', 'correlate', '--input', join(dir, 'flat.json'), '--json']);
  assert.equal(json.code, 0, json.stderr);
  // sim all tied at 0.3: SIMPLER's strict comparison makes every real order a violation for the higher one:
  // act-20k (0.5) vs act-5k 0.4 and vs pi0 0.2 → 0.4; pi0 (0.3) vs act-5k → 0.2; act-5k → 0. MMRV = 0.6 / 3.
  const parsed = JSON.parse(json.stdout) as { pearson: unknown; mmrv: number; n: number };
  assert.equal(parsed.pearson, null);
  assert.ok(Math.abs(parsed.mmrv - 0.2) < 1e-12);
  const text = await runTandem(['stats', 'correlate', '--input', join(dir, 'flat.json')]);
  assert.match(text.stdout, /Pearson r\s+undefined: sim gives every policy the same value/);
});

test('bad pairs files get one clear sentence and a non-zero exit', async (t) => {
  const dir = tempDir(t);
  const cases: [string, string | null, RegExp][] = [
    ['missing.json', null, /The pairs file .*missing\.json does not exist\./],
    ['truncated.json', '[{"policy": "a", "sim": 0.2, "re', /truncated\.json is not valid JSON/],
    ['nan.json', '[{"policy":"a","sim":NaN,"real":0.1}]', /nan\.json is not valid JSON/],
    [
      'nan-string.json',
      JSON.stringify([...HAND_PAIRS.slice(0, 2), { policy: 'c', sim: 'NaN', real: 0.3 }]),
      /Entry 3 of .*\(policy 'c'\) has sim = "NaN"; sim and real must be numbers from 0 to 1\./,
    ],
    [
      'null.json',
      JSON.stringify([{ policy: 'a', sim: 0.1, real: null }, ...HAND_PAIRS.slice(1)]),
      /policy 'a'\) has real = null/,
    ],
    [
      'range.json',
      JSON.stringify([...HAND_PAIRS.slice(0, 2), { policy: 'c', sim: 0.3, real: 1.2 }]),
      /has real = 1\.2; sim and real must be numbers from 0 to 1/,
    ],
    [
      'two.json',
      JSON.stringify(HAND_PAIRS.slice(0, 2)),
      /has 2 policies; correlating sim with real needs at least 3\./,
    ],
    [
      'dup.json',
      JSON.stringify([...HAND_PAIRS, { policy: 'pi0', sim: 0.1, real: 0.1 }]),
      /Policy 'pi0' appears more than once/,
    ],
    ['object.json', JSON.stringify({ pairs: HAND_PAIRS }), /should hold a JSON list/],
    ['noname.json', JSON.stringify([{ sim: 0.1, real: 0.2 }, ...HAND_PAIRS]), /Entry 1 .* needs a "policy" name/],
  ];
  for (const [name, body] of cases) if (body !== null) writeFileSync(join(dir, name), body);
  for (const [name, , pattern] of cases)
    assertOneClearSentence(await runInProcess(['stats', 'correlate', '--input', name, '--json'], dir), pattern);
  assertOneClearSentence(await runInProcess(['stats', 'correlate'], dir), /Missing --input/);
  // And through the real executable, for a few of them: exit code and stderr as a user sees them.
  const picked = [0, 1, 3, 6];
  const results = await Promise.all(
    picked.map((i) => runTandem(['stats', 'correlate', '--input', cases[i][0], '--json'], { cwd: dir })),
  );
  results.forEach((r, k) => assertOneClearSentence(r, cases[picked[k]][2]));
});

test('stats interval prints Wilson and Clopper–Pearson for k of n', async () => {
  const [text, json] = await Promise.all([
    runTandem(['stats', 'interval', '--successes', '8', '--trials', '10']),
    runTandem(['stats', 'interval', '--successes', '0', '--trials', '10', '--json']),
  ]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /8 of 10 succeeded \(80\.0%\)/);
  assert.match(text.stdout, /Wilson\s+\[0\.490, 0\.943\]/);
  assert.match(text.stdout, /Clopper–Pearson\s+\[0\.444, 0\.975\]/);
  const parsed = JSON.parse(json.stdout) as {
    wilson: { lower: number; upper: number };
    clopperPearson: { lower: number; upper: number };
    estimate: number;
  };
  assert.equal(parsed.estimate, 0);
  assert.equal(parsed.wilson.lower, 0);
  assert.ok(Math.abs(parsed.wilson.upper - 0.2775) < 1e-4);
  assert.ok(Math.abs(parsed.clopperPearson.upper - (1 - 0.025 ** 0.1)) < 1e-12);
});

test('stats interval refuses impossible counts in one sentence', async () => {
  const over = await runTandem(['stats', 'interval', '--successes', '11', '--trials', '10']);
  const missing = await runInProcess(['stats', 'interval', '--successes', '3'], '.');
  const junk = await runInProcess(['stats', 'interval', '--successes', 'three', '--trials', '10'], '.');
  assertOneClearSentence(over, /--successes \(11\) cannot exceed --trials \(10\)\./);
  assertOneClearSentence(missing, /Missing --trials/);
  assertOneClearSentence(junk, /--successes must be a whole number/);
});

test('stats summary reads the store in --data DIR (else TANDEM_DATA) and summarises per tier', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'station-data');
  // Fill a real store the way a sweep and a session would, through the Store API.
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dataDir);
  const store = openStore(join(dataDir, 'tandem.sqlite'));
  const set = layoutSetFixture([1, 1, 2, 2]);
  store.putLayoutSet(set);
  const act = store.upsertPolicy({ spec: 'onnx:act.onnx', name: 'act' });
  const base = { policyId: act.id, layoutSetSha256: set.sha256, episodeSeconds: 60, controlHz: 30 };
  store.insertRollouts([
    { ...base, kind: 'sim', layoutIndex: 0, status: 'valid', progress: 1 },
    { ...base, kind: 'sim', layoutIndex: 1, status: 'valid', progress: 0.5 },
    { ...base, kind: 'sim', layoutIndex: 2, status: 'valid', progress: 0 },
    { ...base, kind: 'sim', layoutIndex: 3, status: 'aborted', statusReason: 'sim diverged' },
  ]);
  const real = store.insertRollout({ ...base, kind: 'real', layoutIndex: 0, status: 'valid' });
  store.insertRollout({ ...base, kind: 'real', layoutIndex: 1, status: 'valid' }); // not scored yet
  store.insertOperatorScore({
    rolloutId: real,
    endStates: [{ id: 'bottle-1', region: 'bin' }],
    progress: 1,
    counts: { inBin: 1, target: 1 },
  });
  store.close();

  const byFlag = await runTandem(['stats', 'summary', '--data', dataDir, '--policy', 'act', '--json'], {
    env: { TANDEM_DATA: join(dir, 'elsewhere') },
  });
  assert.equal(byFlag.code, 0, byFlag.stderr);
  assert.equal(existsSync(join(dir, 'elsewhere')), false, '--data wins over TANDEM_DATA');
  const summaries = JSON.parse(byFlag.stdout) as {
    kind: string;
    excluded: number;
    unscored: number;
    tiers: { tier: number | string; rollouts: number; meanProgress: number; successes: number }[];
  }[];
  const sim = summaries.find((s) => s.kind === 'sim')!;
  assert.equal(sim.excluded, 1);
  assert.deepEqual(
    sim.tiers.map((x) => [x.tier, x.rollouts, x.meanProgress, x.successes]),
    [
      [1, 2, 0.75, 1],
      [2, 1, 0, 0],
      ['all', 3, 0.5, 1],
    ],
  );
  const realSummary = summaries.find((s) => s.kind === 'real')!;
  assert.equal(realSummary.unscored, 1);
  assert.deepEqual(
    realSummary.tiers.map((x) => [x.tier, x.meanProgress]),
    [
      [1, 1],
      ['all', 1],
    ],
  );

  const byEnv = await runTandem(['stats', 'summary', '--kind', 'sim'], { env: { TANDEM_DATA: dataDir } });
  assert.equal(byEnv.code, 0, byEnv.stderr);
  assert.match(byEnv.stdout, /act \(sim\): left out 1 aborted \(no outcome recorded 1\)\n/);
  assert.match(byEnv.stdout, /\n  all\s+3\s+3\s+0\.500/);

  assertOneClearSentence(
    await runTandem(['stats', 'summary', '--data', dataDir, '--policy', 'nobody']),
    /There is no policy 'nobody' in the store .*tandem\.sqlite\. Known: act\./,
  );
});

test('stats summary counts policy errors inside the numbers (scored as they stood) and breaks the left-out rollouts down by outcome', async (t) => {
  const dataDir = join(tempDir(t), 'station-data');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dataDir);
  const store = openStore(join(dataDir, 'tandem.sqlite'));
  const set = layoutSetFixture([1, 1, 2, 2]);
  store.putLayoutSet(set);
  const act = store.upsertPolicy({ spec: 'onnx:act.onnx', name: 'act' });
  const base = {
    policyId: act.id,
    layoutSetSha256: set.sha256,
    episodeSeconds: 60,
    controlHz: 30,
    kind: 'sim' as const,
  };
  store.insertRollouts([
    { ...base, layoutIndex: 0, status: 'valid', outcome: 'completed', progress: 1 },
    {
      ...base,
      layoutIndex: 1,
      status: 'valid',
      outcome: 'policy-error',
      policyError: 'Policy act answered NaN at action row 0, entry 5',
      progress: 0,
    },
    {
      ...base,
      layoutIndex: 2,
      status: 'valid',
      outcome: 'policy-error',
      policyError: 'Policy act answered NaN at action row 3, entry 1',
      progress: 0.5,
    },
    {
      ...base,
      layoutIndex: 3,
      status: 'invalid',
      outcome: 'rig-fault',
      statusReason: 'The simulation became unstable',
    },
    {
      ...base,
      layoutIndex: 3,
      status: 'invalid',
      outcome: 'cameras-failed',
      statusReason: 'the renderer process exited',
    },
    { ...base, layoutIndex: 2, status: 'aborted', outcome: 'policy-unavailable', statusReason: 'policy timeout: …' },
  ]);
  store.close();
  const json = await runInProcess(['stats', 'summary', '--data', dataDir, '--json'], dataDir);
  assert.equal(json.code, 0, json.stderr);
  const [sim] = JSON.parse(json.stdout) as {
    policyErrors: number;
    invalid: number;
    aborted: number;
    excluded: number;
    outcomes: Record<string, number>;
    tiers: { tier: number | string; rollouts: number; meanProgress: number; policyErrors: number }[];
  }[];
  assert.deepEqual([sim.policyErrors, sim.invalid, sim.aborted, sim.excluded], [2, 2, 1, 3]);
  assert.deepEqual(sim.outcomes, {
    completed: 1,
    'policy-error': 2,
    'rig-fault': 1,
    'cameras-failed': 1,
    'policy-unavailable': 1,
  });
  // The policy errors are in the numbers: tier 1 = (1 + 0) / 2 layouts, tier 2 = 0.5 over its one scored layout.
  assert.deepEqual(
    sim.tiers.map((x) => [x.tier, x.rollouts, x.meanProgress, x.policyErrors]),
    [
      [1, 2, 0.5, 1],
      [2, 1, 0.5, 1],
      ['all', 3, 0.5, 2],
    ],
  );
  const text = await runInProcess(['stats', 'summary', '--data', dataDir], dataDir);
  assert.match(
    text.stdout,
    /^act \(sim\): 2 ended by the policy's own error \(counted, scored as they stood\); left out 2 invalid \(cameras failed 1, rig fault 1\); 1 aborted \(policy unavailable 1\)\n/,
  );
  assert.match(text.stdout, /policy errors\n  1 .*\s1\n  2 .*\s1\n  all .*\s2\n/);
});

test('a damaged store in the data dir is one sentence naming the file', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'tandem.sqlite'), 'not a database at all '.repeat(100));
  const r = await runTandem(['stats', 'summary', '--data', dir]);
  assertOneClearSentence(
    r,
    new RegExp(
      `The store ${join(dir, 'tandem.sqlite').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged or is not a tandem database`,
    ),
  );
});

test('stats pairs builds pairs.json from the store on layouts run in both sim and real; correlate reads it', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const { mkdirSync, readFileSync } = await import('node:fs');
  mkdirSync(dataDir);
  const store = openStore(join(dataDir, 'tandem.sqlite'));
  const set = layoutSetFixture([1, 1]);
  store.putLayoutSet(set);
  const policy = (name: string) => store.upsertPolicy({ spec: `code:${name}`, name }).id;
  const [a, b, c, d] = ['A', 'B', 'C', 'D'].map(policy);
  const base = { layoutSetSha256: set.sha256, episodeSeconds: 60, controlHz: 30, status: 'valid' as const };
  const sim = (policyId: number, layoutIndex: number, progress: number) => ({
    ...base,
    kind: 'sim' as const,
    policyId,
    layoutIndex,
    progress,
  });
  store.insertRollouts([
    sim(a, 0, 1),
    sim(a, 0, 0.5),
    sim(a, 1, 0.5),
    sim(b, 0, 0.2),
    sim(b, 1, 0.4),
    sim(c, 0, 0.9),
    sim(d, 0, 0.7),
  ]);
  const scoreReal = (policyId: number, layoutIndex: number, progress: number): void => {
    const id = store.insertRollout({ ...base, kind: 'real', policyId, layoutIndex });
    store.insertOperatorScore({ rolloutId: id, endStates: [], progress, counts: {} });
  };
  scoreReal(a, 0, 1);
  scoreReal(b, 0, 0);
  scoreReal(b, 1, 0.5);
  scoreReal(c, 0, 0.5);
  store.close();

  // Paired layouts: A only layout 0 → sim (1 + 0.5)/2 = 0.75, real 1. B both → sim 0.3, real 0.25. C → 0.9, 0.5. D has no real: left out.
  const r = await runTandem(['stats', 'pairs', '--data', dataDir, '-o', 'pairs.json'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Wrote 3 policies to .*pairs\.json\./);
  assert.match(r.stderr, /Left out .*: D\./);
  const written = JSON.parse(readFileSync(join(dir, 'pairs.json'), 'utf8')) as {
    policy: string;
    sim: number;
    real: number;
    realLayouts: number;
  }[];
  assert.deepEqual(
    written.map((p) => [p.policy, +p.sim.toFixed(12), p.real, p.realLayouts]),
    [
      ['A', 0.75, 1, 1],
      ['B', 0.3, 0.25, 2],
      ['C', 0.9, 0.5, 1],
    ],
  );

  // Pearson by hand: sim deviations [0.1, −0.35, 0.25], real [0.41667, −0.33333, −0.08333];
  // Σs·r = 0.1375, Σs² = 0.195, Σr² = 0.291667 → r = 0.1375 / √0.056875 = 0.57656.
  // MMRV: only A–C disagree (sim A < C, real A > C), |1 − 0.5| = 0.5 → (0.5 + 0 + 0.5) / 3.
  const corr = await runTandem(['stats', 'correlate', '--input', 'pairs.json', '--json'], { cwd: dir });
  const parsed = JSON.parse(corr.stdout) as { pearson: number; mmrv: number; n: number };
  assert.ok(Math.abs(parsed.pearson - 0.57656) < 1e-4, String(parsed.pearson));
  assert.ok(Math.abs(parsed.mmrv - 1 / 3) < 1e-12);
  assert.equal(parsed.n, 3);

  // A retrained checkpoint under the same name stays a separate policy, told apart by its id.
  const again = openStore(join(dataDir, 'tandem.sqlite'));
  const a2 = again.upsertPolicy({ spec: 'code:A', name: 'A', checkpointSha256: 'e'.repeat(64) }).id;
  again.insertRollout({ ...sim(a2, 0, 0.1) });
  const real2 = again.insertRollout({ ...base, kind: 'real', policyId: a2, layoutIndex: 0 });
  again.insertOperatorScore({ rolloutId: real2, endStates: [], progress: 0.2, counts: {} });
  again.close();
  const renamed = await runInProcess(['stats', 'pairs', '--data', dataDir], dir);
  assert.equal(renamed.code, 0, renamed.stderr);
  assert.deepEqual(
    (JSON.parse(renamed.stdout) as { policy: string }[]).map((p) => p.policy),
    [`A #${a}`, 'B', 'C', `A #${a2}`],
  );

  // --all-layouts: A's sim also counts layout 1 → (0.75 + 0.5) / 2 = 0.625.
  const all = await runInProcess(['stats', 'pairs', '--data', dataDir, '--all-layouts'], dir);
  assert.equal((JSON.parse(all.stdout) as { sim: number }[])[0].sim, 0.625);
});
