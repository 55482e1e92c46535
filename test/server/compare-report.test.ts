/**
 * The compare view reads the paired report: GET /api/compare/report on a real `tandem station`
 * gives exactly `tandem report --json`'s numbers for the same store, refuses what the report
 * refuses in the same words, and the UI (Debian chromium) shows per-tier intervals, r and MMRV
 * once three policies have paired data, and the refusal sentence when the choice cannot be compared.
 */
import { pageProblems } from '../helpers/page-problems.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM_PATH } from '../../src/sim/render/chromium-renderer.js';
import { openStore } from '../../src/store/store.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import {
  simCalibrationHash,
  simCalibrationJson,
  DEFAULT_SIM_CALIBRATION,
  SIM_CALIBRATION_KIND,
  withEngine,
} from '../../src/sim/calibration.js';
import { calibrationFixture } from '../store/fixture-data.js';

const SHOTS = join(PROJECT_ROOT, 'test-output', 'station-ui');
const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 3], perTier: 3, seed: 5 });
const mixed = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 2, seed: 6 });
/** Mostly 20 s rollouts and one short 3 s test rollout: Compare compares the 20 s ones and says so. */
const lengths = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 7 });
/** The same three policies swept by Rapier and by MuJoCo (the same record on each), with real rollouts: the engines swap the last two. */
const engines = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 3, seed: 9 });
const MUJOCO = withEngine(DEFAULT_SIM_CALIBRATION, 'mujoco');
const otherCalibration = calibrationFixture(SIM_CALIBRATION_KIND, 98, { physicsStepS: 0.004 });
const SPECS = ['code:bottles-in-the-bin', 'code:bottles-in-the-bin?skill=0.6', 'code:bottles-in-the-bin?skill=0.3'];

/** Three graded policies: sim on every layout of `set` (2 repeats), real on the first 4; on `mixed`, sim with two calibrations. */
function fillStore(file: string): void {
  const store = openStore(file);
  try {
    store.putLayoutSet(set);
    store.putLayoutSet(mixed);
    store.putLayoutSet(lengths);
    store.putLayoutSet(engines);
    store.putCalibration({
      sha256: simCalibrationHash(MUJOCO),
      kind: SIM_CALIBRATION_KIND,
      version: MUJOCO.version,
      canonicalJson: simCalibrationJson(MUJOCO),
    });
    const cal = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
    store.putCalibration({
      sha256: cal,
      kind: SIM_CALIBRATION_KIND,
      version: DEFAULT_SIM_CALIBRATION.version,
      canonicalJson: simCalibrationJson(DEFAULT_SIM_CALIBRATION),
    });
    const other = otherCalibration;
    store.putCalibration(other);
    SPECS.forEach((spec, pi) => {
      const p = store.upsertPolicy({
        spec,
        name: spec.replace('code:bottles-in-the-bin', 'bottles').replace('?skill=', ' skill '),
        checkpointSha256: null,
      });
      set.layouts.forEach((layout, i) => {
        const n = layout.objects.length;
        const done = Math.max(0, Math.min(n, Math.round(n * [1, 0.6, 0.3][pi]) - (i % 2)));
        for (let rep = 0; rep < 2; rep++) {
          store.insertRollout({
            kind: 'sim',
            policyId: p.id,
            layoutSetSha256: set.sha256,
            layoutIndex: i,
            repeatIndex: rep,
            episodeSeconds: 20,
            controlHz: 50,
            status: 'valid',
            progress: done / n,
            counts: {
              inBin: done,
              target: n,
              offTable: 0,
              'objects:done:bottle-500ml': done,
              'objects:left-undone:bottle-500ml': n - done,
            },
            calibrationSha256s: [cal],
            durationS: 5,
          });
        }
        if (i < 4) {
          const realDone = Math.max(0, done - (pi === 2 ? 1 : 0));
          const id = store.insertRollout({
            kind: 'real',
            policyId: p.id,
            layoutSetSha256: set.sha256,
            layoutIndex: i,
            episodeSeconds: 20,
            controlHz: 50,
            status: 'valid',
            durationS: 21,
          });
          store.insertOperatorScore({
            rolloutId: id,
            endStates: layout.objects.map((o, k) =>
              k < realDone ? { id: o.id, region: 'bin' } : { id: o.id, upright: true },
            ),
            progress: realDone / n,
            counts: { inBin: realDone, target: n },
            operator: 'test',
          });
        }
      });
      engines.layouts.forEach((layout, i) => {
        const target = layout.objects.length;
        for (const [c, progress] of [
          [cal, [0.9, 0.6, 0.3][pi]],
          [simCalibrationHash(MUJOCO), [0.9, 0.2, 0.4][pi]],
        ] as const) {
          store.insertRollout({
            kind: 'sim',
            policyId: p.id,
            layoutSetSha256: engines.sha256,
            layoutIndex: i,
            episodeSeconds: 20,
            controlHz: 50,
            status: 'valid',
            progress,
            counts: { inBin: 0, target },
            calibrationSha256s: [c],
            durationS: 5,
          });
        }
        const id = store.insertRollout({
          kind: 'real',
          policyId: p.id,
          layoutSetSha256: engines.sha256,
          layoutIndex: i,
          episodeSeconds: 20,
          controlHz: 50,
          status: 'valid',
          durationS: 21,
        });
        store.insertOperatorScore({
          rolloutId: id,
          endStates: layout.objects.map((o) => ({ id: o.id, upright: true })),
          progress: [0.8, 0.5, 0.2][pi],
          counts: { inBin: 0, target },
          operator: 'test',
        });
      });
      if (pi === 0) {
        lengths.layouts.forEach((layout, i) => {
          store.insertRollout({
            kind: 'sim',
            policyId: p.id,
            layoutSetSha256: lengths.sha256,
            layoutIndex: i,
            episodeSeconds: 20,
            controlHz: 50,
            status: 'valid',
            progress: 0,
            counts: { inBin: 0, target: layout.objects.length },
            calibrationSha256s: [cal],
            durationS: 5,
          });
          for (const seconds of i === 0 ? [20, 3] : [20]) {
            const id = store.insertRollout({
              kind: 'real',
              policyId: p.id,
              layoutSetSha256: lengths.sha256,
              layoutIndex: i,
              episodeSeconds: seconds,
              controlHz: 50,
              status: 'valid',
              durationS: seconds + 1,
            });
            store.insertOperatorScore({
              rolloutId: id,
              endStates: layout.objects.map((o) => ({ id: o.id, upright: true })),
              progress: 0,
              counts: { inBin: 0, target: layout.objects.length },
              operator: 'test',
            });
          }
        });
        mixed.layouts.forEach((_, i) => {
          store.insertRollout({
            kind: 'sim',
            policyId: p.id,
            layoutSetSha256: mixed.sha256,
            layoutIndex: i,
            episodeSeconds: 20,
            controlHz: 50,
            status: 'valid',
            progress: 0.5,
            calibrationSha256s: [i === 0 ? cal : other.sha256],
            durationS: 5,
          });
        });
      }
    });
  } finally {
    store.close();
  }
}

test('the compare view reads the paired report: the same numbers as tandem report --json, its refusals in words, r and MMRV with three policies', async (t) => {
  // Compare reads the store, never the arms: the mirror rig (no emulated cell, whose physics would run
  // on the wall clock the whole test) is all the station needs here.
  const station = await startStation({ rigConfig: { type: 'mirror' } });
  t.after(() => station.dispose());
  fillStore(join(station.dataDir, 'tandem.sqlite'));
  const api = async <T>(path: string): Promise<{ status: number; data: T }> => {
    const res = await fetch(`${station.base}${path}`, { headers: { 'x-tandem-token': station.token } });
    return { status: res.status, data: (await res.json()) as T };
  };

  // The endpoint and the CLI on the same store, same policies, same seed: every number the same.
  const viaApi = await api<Record<string, unknown>>(`/api/compare/report?layoutSet=${set.sha256}&policies=1,2,3`);
  assert.equal(viaApi.status, 200, JSON.stringify(viaApi.data).slice(0, 300));
  const dir = mkdtempSync(join(tmpdir(), 'tandem-compare-report-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
  const cli = await runTandem([
    'report',
    '--policies',
    SPECS.join(','),
    '--layouts',
    join(dir, 'set.json'),
    '-o',
    join(dir, 'r.html'),
    '--json',
    '--data',
    station.dataDir,
  ]);
  assert.equal(cli.code, 0, cli.stderr);
  const fromCli = JSON.parse(cli.stdout) as Record<string, unknown>;
  for (const k of ['generatedAt', 'html', 'png']) delete fromCli[k];
  const { realOnEmulatedCell, layoutTiers, ...report } = viaApi.data;
  assert.deepEqual(report, fromCli);
  assert.equal(realOnEmulatedCell, false);
  assert.deepEqual(
    layoutTiers,
    set.layouts.map((l) => l.tier),
  );
  const correlation = report.correlation as { policies: number; pearson: { r: number } };
  assert.equal(correlation.policies, 3);
  // Without a policy list: every policy with rollouts on the set, in store order — the same report.
  assert.deepEqual(
    (await api<Record<string, unknown>>(`/api/compare/report?layoutSet=${set.sha256}`)).data,
    viaApi.data,
  );

  // Refusals: the report's own sentence, as the CLI says it.
  const refused = await api<{ error: string }>(`/api/compare/report?layoutSet=${mixed.sha256}&policies=1`);
  assert.equal(refused.status, 400);
  assert.match(refused.data.error, /ran with 2 different calibrations .* pick it with --sim-calibration SHA256\./);
  // The refusal names what is stored to pick from; a pick makes it the CLI's --sim-calibration report.
  const cal = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
  const refusedChoices = (
    refused.data as unknown as { choices: { simCalibrations: { value: string; rollouts: number }[] } }
  ).choices;
  assert.deepEqual(refusedChoices.simCalibrations.map((c) => c.value).sort(), [cal, otherCalibration.sha256].sort());
  assert.deepEqual(
    refusedChoices.simCalibrations.map((c) => c.rollouts),
    [1, 1],
  );
  const picked = await api<Record<string, unknown>>(
    `/api/compare/report?layoutSet=${mixed.sha256}&policies=1&simCalibration=${cal}`,
  );
  assert.equal(picked.status, 200, JSON.stringify(picked.data).slice(0, 300));
  writeFileSync(join(dir, 'mixed.json'), serializeLayoutSet(mixed));
  const cliPicked = await runTandem([
    'report',
    '--policies',
    SPECS[0],
    '--layouts',
    join(dir, 'mixed.json'),
    '--sim-calibration',
    cal,
    '-o',
    join(dir, 'm.html'),
    '--json',
    '--data',
    station.dataDir,
  ]);
  assert.equal(cliPicked.code, 0, cliPicked.stderr);
  const fromCliPicked = JSON.parse(cliPicked.stdout) as Record<string, unknown>;
  for (const k of ['generatedAt', 'html', 'png']) delete fromCliPicked[k];
  const { realOnEmulatedCell: _cell, layoutTiers: _tiers, ...pickedReport } = picked.data;
  assert.deepEqual(pickedReport, fromCliPicked);
  assert.equal(
    (await api<{ error: string }>(`/api/compare/report?layoutSet=${mixed.sha256}&policies=1&episodeSeconds=-1`)).status,
    400,
  );
  assert.equal((await api<{ error: string }>(`/api/compare/report?layoutSet=${set.sha256}&policies=99`)).status, 400);
  assert.match(
    (await api<{ error: string }>(`/api/compare/report?layoutSet=${set.sha256}&policies=99`)).data.error,
    /There is no policy '99' in the store/,
  );
  assert.equal((await api<{ error: string }>(`/api/compare/report?layoutSet=${'0'.repeat(64)}`)).status, 404);
  assert.equal((await api<{ error: string }>(`/api/compare/report?layoutSet=abc`)).status, 400);

  // The UI.
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'tandem-compare-report-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 800 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  t.after(async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const problems = pageProblems(page);
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('5');
  await page.waitForFunction(
    (sha) =>
      Array.from((document.getElementById('compare-set') as HTMLSelectElement).options).some((o) => o.value === sha),
    set.sha256,
    { timeout: 20_000 },
  );
  await page.selectOption('#compare-set', set.sha256);
  // The set's own numbers, not those of the set shown first (the engines set also has r and MMRV).
  await page.waitForFunction(
    (sha) =>
      (document.getElementById('compare-heading')?.textContent ?? '').includes(`set ${sha.slice(0, 12)}`) &&
      /Pearson r/.test(document.getElementById('compare-r-mmrv')?.textContent ?? ''),
    set.sha256,
    { timeout: 20_000 },
  );
  const rText = (await page.textContent('#compare-r-mmrv')) ?? '';
  assert.ok(rText.includes(`Pearson r ${correlation.pearson.r.toFixed(2)} [`), rText);
  assert.match(rText, /MMRV \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] over 3 policies/);
  // Per tier: 3 policies × (tiers 1, 3, all), each with the report's mean and interval.
  const tierRows = await page.$$eval('#compare-tiers tr[data-tier]', (rows) =>
    rows.map((r) => `${r.getAttribute('data-policy')}:${r.getAttribute('data-tier')}`),
  );
  assert.deepEqual(tierRows, ['1:1', '1:3', '1:all', '2:1', '2:3', '2:all', '3:1', '3:3', '3:all']);
  const policies = report.policies as {
    key: string;
    real: {
      tiers: { tier: number | 'all'; meanProgress: number; progressInterval: { lower: number; upper: number } }[];
    };
  }[];
  const all1 = policies[0].real.tiers.find((x) => x.tier === 'all')!;
  const allRow = (await page.textContent('#compare-tiers tr[data-policy="1"][data-tier="all"]')) ?? '';
  assert.ok(
    allRow.includes(
      `${all1.meanProgress.toFixed(2)}${Math.round(all1.progressInterval.lower * 100)}%–${Math.round(all1.progressInterval.upper * 100)}%`,
    ),
    allRow,
  );
  // Per layout: every layout of the set; the layouts without real rollouts say so.
  assert.equal(await page.locator('#compare-layouts tr[data-layout]').count(), set.layouts.length);
  assert.match((await page.textContent('#compare-layouts tr[data-layout="5"]')) ?? '', /no rollouts.*2 of 2/);
  await page.waitForFunction(
    () => /episode file/.test(document.getElementById('replay-note')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  );
  assert.match(
    (await page.textContent('#replay-note')) ?? '',
    /No real rollout of this policy on layout \d has an episode file/,
  );
  await page.screenshot({ path: join(SHOTS, 'compare-report-1280x800.png'), fullPage: true });
  assert.ok(await page.isHidden('#compare-engines'), 'one engine: no cross-engine panel');

  // Sweeps on both engines: Rapier's compared with real, and the engines' agreement beside it.
  await page.selectOption('#compare-set', engines.sha256);
  await page.waitForSelector('#compare-engines-verdict', { timeout: 20_000 });
  assert.equal(
    await page.textContent('#compare-engines-verdict'),
    "rapier and mujoco order 1 pair of the 3 policies differently (bottles skill 0.6 and bottles skill 0.3): where they disagree, the sim's verdict depends on the engine.",
  );
  assert.equal(
    await page.textContent('#compare-engines-disagree li'),
    'bottles skill 0.6 vs bottles skill 0.3: rapier 0.60 vs 0.30, mujoco 0.20 vs 0.40. The real rig: 0.50 vs 0.20, as rapier orders them.',
  );
  assert.match(
    (await page.textContent('#compare-engines')) ?? '',
    /mujoco against rapier: Pearson r -?\d\.\d\d · MMRV 0\.200 over 3 policies\.rapier against real: Pearson r 1\.00 · MMRV 0\.000/,
  );
  // The first policy's row over all tiers: each engine, real, and the layouts behind them.
  assert.equal(await page.textContent('#compare-engines-tiers tr[data-tier="all"]'), 'all tiers0.900.900.803 / 3');
  assert.equal(
    await page.inputValue('#compare-sim-calibration'),
    cal,
    "the picker shows the record compared with real: Rapier's",
  );
  await page.screenshot({ path: join(SHOTS, 'compare-engines-1280x800.png'), fullPage: true });
  await page.selectOption('#compare-set', set.sha256);
  await page.waitForFunction(
    () =>
      (document.getElementById('compare-engines') as HTMLElement).hidden &&
      /Pearson r/.test(document.getElementById('compare-r-mmrv')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  );

  // Two policies ticked off: no correlation, and why.
  await page.uncheck('#compare-policy-3');
  await page.uncheck('#compare-policy-2');
  await page.waitForFunction(
    () => /only bottles has them/.test(document.getElementById('compare-r-mmrv')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  );
  assert.match((await page.textContent('#compare-r-mmrv')) ?? '', /needs at least 3 policies with paired results/);
  assert.equal(await page.locator('#compare-tiers tr[data-tier]').count(), 3, 'one policy left: its tiers only');

  // The mixed set: the refusal in words, no numbers.
  await page.selectOption('#compare-set', mixed.sha256);
  await page.waitForFunction(() => !(document.getElementById('compare-refusal') as HTMLElement).hidden, undefined, {
    timeout: 20_000,
  });
  assert.match((await page.textContent('#compare-refusal')) ?? '', /ran with 2 different calibrations/);
  assert.equal(await page.locator('#compare-tiers tr').count(), 1, 'only the header row');
  assert.match((await page.textContent('#replay-note')) ?? '', /Nothing to replay for this choice/);
  // The calibration picker: the two stored sim calibrations, none picked yet; nothing else to pick.
  assert.ok(await page.isVisible('#compare-sim-calibration'), 'a sim calibration picker for the mix');
  assert.ok(
    !(await page.isVisible('#compare-real-calibration')) && !(await page.isVisible('#compare-episode-seconds')),
    'one real calibration set and one episode length: no picker for them',
  );
  const offered = await page.$$eval('#compare-sim-calibration option', (os) =>
    os.map((o) => [(o as HTMLOptionElement).value, o.textContent ?? '']),
  );
  assert.deepEqual(offered.map(([v]) => v).sort(), ['', cal, otherCalibration.sha256].sort());
  assert.ok(
    offered.some(([v, text]) => v === cal && text === `${cal.slice(0, 12)}… · 1 sim rollout`),
    JSON.stringify(offered),
  );
  assert.match((await page.textContent('#compare-refusal')) ?? '', /Here: pick one under 'Sim calibration' above\.$/);
  await page.screenshot({ path: join(SHOTS, 'compare-refusal-1280x800.png'), fullPage: true });
  // Picking one: the report of that calibration, the other listed as left out.
  await page.selectOption('#compare-sim-calibration', cal);
  await page.waitForFunction(() => (document.getElementById('compare-refusal') as HTMLElement).hidden, undefined, {
    timeout: 20_000,
  });
  const pickedTiers = await page.$$eval('#compare-tiers tr[data-tier]', (rows) =>
    rows.map((r) => `${r.getAttribute('data-policy')}:${r.getAttribute('data-tier')}`),
  );
  assert.deepEqual(pickedTiers, ['1:2', '1:all']);
  assert.match((await page.textContent('#compare-left-out')) ?? '', /1 rollout with another calibration left out\./);
  assert.equal(await page.inputValue('#compare-sim-calibration'), cal, 'the pick stays shown, to switch');
  const simAll = (
    pickedReport.policies as { simAllLayouts: { tiers: { tier: number | 'all'; meanProgress: number }[] } }[]
  )[0].simAllLayouts.tiers.find((x) => x.tier === 'all')!;
  assert.ok(
    ((await page.textContent('#compare-tiers tr[data-tier="all"]')) ?? '').includes(simAll.meanProgress.toFixed(2)),
    "sim over every layout: the picked calibration's rollout",
  );
  await page.screenshot({ path: join(SHOTS, 'compare-calibration-picked-1280x800.png'), fullPage: true });
  // Back to the set with one calibration: no picker.
  await page.selectOption('#compare-set', set.sha256);
  await page.waitForFunction(() => document.querySelector('#compare-tiers tr[data-tier="3"]') !== null, undefined, {
    timeout: 20_000,
  });
  assert.ok(!(await page.isVisible('#compare-sim-calibration')), 'one sim calibration: no picker');
  await page.selectOption('#compare-set', mixed.sha256);
  await page.waitForFunction(
    (c) =>
      (document.getElementById('compare-sim-calibration') as HTMLSelectElement).value === c &&
      (document.getElementById('compare-refusal') as HTMLElement).hidden,
    cal,
    { timeout: 20_000 },
  );
  // Several episode lengths (a short test rollout among 20 s ones): the most common is compared by
  // default, the other said in words, and the picker switches to it.
  await page.selectOption('#compare-set', lengths.sha256);
  await page.waitForFunction(() => !(document.getElementById('compare-length-note') as HTMLElement).hidden, undefined, {
    timeout: 20_000,
  });
  assert.equal(await page.isHidden('#compare-refusal'), true, 'no refusal: a comparison is shown');
  assert.equal(
    await page.textContent('#compare-length-note'),
    "Compared: 20 s episodes, the length most of these rollouts ran (2 real, 2 sim). Also stored, not in these numbers: 3 s episodes (1 real) — results of different episode lengths are never pooled; pick another under 'Episode length' to compare those.",
  );
  assert.equal(await page.inputValue('#compare-episode-seconds'), '20');
  assert.equal(await page.locator('#compare-tiers tr[data-tier]').count(), 2, 'the 20 s numbers: tier 1 and all');
  await page.screenshot({ path: join(SHOTS, 'compare-episode-length-default-1280x800.png'), fullPage: true });
  await page.selectOption('#compare-episode-seconds', '3');
  await page.waitForFunction(() => (document.getElementById('compare-length-note') as HTMLElement).hidden, undefined, {
    timeout: 20_000,
  });
  assert.equal(await page.inputValue('#compare-episode-seconds'), '3', 'the pick stays shown');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the compare view fits 1280 px wide (overflows by ${overflow} px)`);
  // Chromium logs every 4xx answer; here they are answers the view shows in words (the refusal,
  // and the replay's 404: these rollouts have no episode files). Nothing else may be logged.
  assert.deepEqual(
    problems.filter((p) => !/responded with a status of 40[04]/.test(p)),
    [],
    'no errors in the page',
  );
});
