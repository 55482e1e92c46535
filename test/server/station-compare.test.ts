/**
 * End to end in Debian's headless chromium against a real `tandem station` on the emulated cell:
 * the operator stops a running rollout with the Stop button (the rig holds, then damps; the
 * rollout is stored as aborted, not averaged), then opens Compare and reads real vs sim task
 * progress for the policy on the layout set — per tier and per layout — with the layout in 3D.
 * Sim rollouts come from `tandem sim sweep` into the same data folder, as a lab would run them.
 * Screenshots at 1280×800 and at 3840×2160 (a 4K screen without OS scaling) go to
 * test-output/station-ui/.
 */
import { pageProblems } from '../helpers/page-problems.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM_PATH } from '../../src/sim/render/chromium-renderer.js';
import type { RolloutRun } from '../../src/server/api-types.js';

const SHOTS = join(PROJECT_ROOT, 'test-output', 'station-ui');
const POLICY = 'code:bottles-in-the-bin';

test('an operator stops a running rollout with the Stop button, then compares real and sim on the layout set', async (t) => {
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', clock: 'paced' } });
  t.after(() => station.dispose());
  const api = async <T>(path: string, body?: unknown): Promise<{ status: number; data: T }> => {
    const res = await fetch(`${station.base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        'x-tandem-token': station.token,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, data: (await res.json()) as T };
  };

  // A two-layout set (tiers 1 and 2); the sim twin runs the policy on both (2 s episodes, as the real
  // one: Compare pools only rollouts of one length, and what it shows is the same at any length).
  const setFile = join(station.dataDir, 'bottles.json');
  const sampled = await runTandem([
    'layouts',
    'sample',
    '--task',
    'bottles-in-the-bin',
    '--tiers',
    '1,2',
    '--per-tier',
    '1',
    '--seed',
    '7',
    '-o',
    setFile,
  ]);
  assert.equal(sampled.code, 0, sampled.stderr);
  const sweep = await runTandem(
    [
      'sim',
      'sweep',
      '--layouts',
      setFile,
      '--policy',
      POLICY,
      '--seconds',
      '2',
      '--data',
      station.dataDir,
      '--record',
      join(station.dataDir, 'sim-episodes'),
      '--json',
    ],
    { timeoutMs: 240_000 },
  );
  assert.equal(sweep.code, 0, sweep.stderr);
  const simTiers = (JSON.parse(sweep.stdout) as { tiers: { tier: number | 'all'; meanProgress: number }[] }).tiers;
  const simTier1 = simTiers.find((x) => x.tier === 1)!.meanProgress;
  const sets = await api<{ sha256: string }[]>('/api/layout-sets');
  assert.equal(sets.data.length, 1, 'the sweep put the set in the station store');
  const layoutSet = sets.data[0].sha256;

  // One real rollout on layout 0 (tier 1), to its end and scored by the cell's scripted operator.
  const waitRun = async (pred: (r: RolloutRun) => boolean, timeoutMs: number): Promise<RolloutRun> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = (await api<RolloutRun | null>('/api/run')).data;
      if (r && pred(r)) return r;
      if (Date.now() > end) throw new Error(`the run did not get there in time: ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 250));
    }
  };
  // On paced virtual time the cell cannot starve and the policy's slowness costs the episode
  // nothing: the rollout is valid however busy the machine.
  assert.equal((await api('/api/rollouts/run', { policy: POLICY, layoutSet, layout: 0, seconds: 2 })).status, 202);
  const first = await waitRun((r) => r.runId === 1 && (r.phase === 'done' || r.phase === 'failed'), 120_000);
  assert.equal(first.phase, 'done', first.message);
  assert.equal(first.status, 'valid', first.message);
  assert.notEqual(first.progress, null);
  const stopWithout = await api<{ error: string }>('/api/rollouts/stop', {});
  assert.equal(stopWithout.status, 409);
  assert.match(stopWithout.data.error, /No rollout is running/);
  const stopWithField = await api<{ error: string }>('/api/rollouts/stop', { now: true });
  assert.equal(stopWithField.status, 400);
  assert.match(stopWithField.data.error, /unknown field 'now'/);
  const badQuery = await api<{ error: string }>(`/api/compare?policy=1&layoutSet=${layoutSet.slice(0, 10)}`);
  assert.equal(badQuery.status, 400);
  assert.match(badQuery.data.error, /is not a layout set's SHA-256/);

  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'tandem-station-compare-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 800 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  t.after(async () => {
    if (!page.isClosed()) await page.screenshot({ path: join(SHOTS, 'compare-last-state.png') }).catch(() => {});
    t.diagnostic(`station stderr: ${station.stderr()}`);
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const problems = pageProblems(page);
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');

  // A long rollout on layout 0, stopped from the UI while it runs.
  await page.keyboard.press('2');
  await page.waitForFunction(
    () => (document.getElementById('run-layout-set') as HTMLSelectElement).value.length === 64,
  );
  await page.fill('#run-policy', POLICY);
  await page.fill('#run-layout', '0');
  await page.fill('#run-seconds', '30');
  await page.click('#run-rollout');
  await page.waitForFunction(() => document.getElementById('run-panel')?.dataset.phase === 'running', undefined, {
    timeout: 90_000,
  });
  await page.waitForFunction(() => /step [1-9]\d* of/.test(document.getElementById('run-panel')?.textContent ?? ''));
  await page.screenshot({ path: join(SHOTS, 'stop-button.png') });
  await page.click('#stop-rollout');
  await page.waitForFunction(() => document.getElementById('run-panel')?.dataset.phase === 'done', undefined, {
    timeout: 60_000,
  });
  const stopped = await waitRun((r) => r.runId === 2 && r.phase === 'done', 5_000);
  assert.equal(stopped.status, 'aborted', stopped.message);
  assert.match(stopped.message, /stopped by the operator/);
  assert.ok(
    stopped.stepsDone < stopped.totalSteps / 2,
    `stopped early: step ${stopped.stepsDone} of ${stopped.totalSteps}`,
  );
  await page.waitForFunction(() => document.getElementById('rig-mode')?.textContent === 'DAMPED · OFF', undefined, {
    timeout: 10_000,
  });
  assert.doesNotMatch((await page.textContent('#rig-mode')) ?? '', /E-STOP/, 'a Stop is not an E-stop');
  await page.screenshot({ path: join(SHOTS, 'stop-done.png') });

  // Compare: layout 0 has the scored real rollout (the stopped one listed, not averaged) and its sim twin.
  await page.keyboard.press('5');
  await page.waitForFunction(
    () => document.querySelectorAll('#compare-layouts tr[data-layout]').length === 2,
    undefined,
    { timeout: 20_000 },
  );
  const realCount = '1 of 2 (1 not counted)';
  await page.waitForFunction(
    (c) => document.querySelector('#compare-layouts tr[data-layout="0"]')?.textContent?.includes(c) ?? false,
    realCount,
  );
  const row0 = (await page.textContent('#compare-layouts tr[data-layout="0"]')) ?? '';
  assert.ok(
    row0.includes(`${first.progress!.toFixed(2)}${realCount}`),
    `real: the finished rollout's score; the stopped one not averaged: ${row0}`,
  );
  assert.match(row0, new RegExp(`${simTier1.toFixed(2)}1 of 1`), `sim: the sweep's score on layout 0: ${row0}`);
  const row1 = (await page.textContent('#compare-layouts tr[data-layout="1"]')) ?? '';
  assert.match(row1, /no rollouts/, 'layout 1 has no real rollouts');
  const tiers = await page.$$eval('#compare-tiers tr[data-tier]', (rows) =>
    rows.map((r) => r.getAttribute('data-tier')),
  );
  assert.deepEqual(tiers, ['1', '2', 'all']);
  assert.match((await page.textContent('#compare-heading')) ?? '', /emulated cell: a rehearsal, not a result/);
  // The 3D view drew the layout (WebGL through SwiftShader) and names what is on the table.
  await page.waitForFunction(
    () => Number((document.getElementById('compare-3d-canvas') as HTMLCanvasElement | null)?.dataset.drawn ?? 0) >= 1,
    undefined,
    { timeout: 30_000 },
  );
  assert.match((await page.textContent('#compare-3d-note')) ?? '', /Layout #0, tier 1: \d+ objects?/);
  // The replay: the recorded real episode (the valid one) beside its recorded sim twin, with joint-error traces.
  await page.waitForFunction(
    () => /Real rollout \d+/.test(document.getElementById('replay-note')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  );
  const note = (await page.textContent('#replay-note')) ?? '';
  assert.match(
    note,
    new RegExp(
      `^Real rollout ${first.rolloutId} \\(valid, progress ${first.progress!.toFixed(2)}\\), \\d\\.\\d s, solid; sim rollout \\d+ \\(valid`,
    ),
    note,
  );
  assert.match((await page.textContent('#replay-summary')) ?? '', /RMS worst: (left|right)_joint\d \d\.\d{3}/);
  await page.locator('#replay-time').fill('600');
  assert.match((await page.textContent('#replay-clock')) ?? '', /^[1-9]\.\d\d s$/, 'scrubbing moves the replay clock');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the compare view fits 1280 px wide (overflows by ${overflow} px)`);
  await page.screenshot({ path: join(SHOTS, 'compare-1280x800.png'), fullPage: true });

  // A 4K screen without OS scaling: the same layout, twice as big.
  const small = await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
  await page.setViewportSize({ width: 3840, height: 2160 });
  const big = await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
  assert.equal(small, 16);
  assert.ok(big >= 30, `the root text grows on a 4K screen (${big} px)`);
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(SHOTS, 'compare-3840x2160.png') });
  assert.deepEqual(problems, [], 'no errors in the page');
});
