/**
 * End to end: `tandem station --projector-calibration F --cell-io C` on the emulated cell, with a
 * real node-opcua PLC emulator and Debian's headless chromium showing both the operator page and
 * the /projector page (what a browser full screen on the projector's display shows).
 *
 * The door is open when the station comes up: every page's status bar says so, and a session
 * started then shows nothing on the table and starts no rollout. Closed, the operator carries on:
 * the projector shows the layout's footprints (the calibrated frame), goes black when the
 * operator confirms the placement, and the policy runs; the door opening mid-rollout stops the
 * arms (the rig's own supervisor reads the PLC) and the session offers the rollout for a redo.
 */
import { pageProblems } from '../helpers/page-problems.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { chromium } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM_PATH } from '../../src/sim/render/chromium-renderer.js';
import { PlcEmulator } from '../../drivers/cell-io/plc-emulator.js';
import { calibrateProjector, serializeCalibration } from '../../calibration/projector/calibration-record.js';
import {
  RESOLUTION,
  simulateAlignment,
  TABLE_FIDUCIALS_MM,
  trueHomography,
} from '../calibration/projector/projector-geometry.js';
import {
  PROJECTOR_FRAME_PATH,
  PROJECTOR_PAGE_PATH,
  TOKEN_HEADER,
  type CalibrationsView,
  type LayoutSetSummary,
  type ProjectorState,
  type RigStatus,
  type RolloutDetail,
  type SessionView,
} from '../../src/server/api-types.js';

const SHOTS = join(PROJECT_ROOT, 'test-output', 'station-ui');

/**
 * Asks the station every 200 ms: each ask is a request the station and this process both serve,
 * and every state waited for here lasts seconds (the shortest, a 4 s rollout's running phase).
 */
async function waitFor(cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${cond.toString()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('station with a projector and cell I/O: the Rig page names the calibrations; an open door holds the session with nothing projected; closed, the footprints show, black before the arms move, and a door opened mid-rollout stops it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-cell-parts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const plc = await PlcEmulator.start({ pkiDir: join(dir, 'pki'), heartbeatMs: 50 });
  t.after(() => plc.stop());
  const cellIo = join(dir, 'cell-io.json');
  writeFileSync(cellIo, JSON.stringify({ ...plc.config(), staleAfterMs: 400 }));
  const calibration = calibrateProjector({
    points: simulateAlignment(trueHomography(), TABLE_FIDUCIALS_MM, 1, 42),
    resolution: RESOLUTION,
    createdAt: '2026-12-01T10:00:00.000Z',
  });
  const calibrationFile = join(dir, 'projector.json');
  writeFileSync(calibrationFile, serializeCalibration(calibration));
  plc.setInput('doorClosed', false);

  const station = await startStation({
    rigConfig: { type: 'yam-cell', transport: 'slcan', clock: 'paced' },
    args: ['--projector-calibration', calibrationFile, '--cell-io', cellIo],
  });
  t.after(() => station.dispose());
  const api = <T>(path: string, body?: unknown): Promise<T> => station.api<T>(path, body);
  const session = (): Promise<SessionView> => api<SessionView>('/api/session');
  const projector = (): Promise<ProjectorState> => api<ProjectorState>('/api/projector');
  const answer = async (kind: string, a: unknown): Promise<void> => {
    await waitFor(async () => (await session())?.prompt?.kind === kind, 60_000);
    await api('/api/session/answer', { prompt: (await session()).prompt!.id, answer: a });
  };

  const rig = await api<RigStatus>('/api/rig');
  assert.equal(rig.interlock?.open, true, 'the open door is the rig status');
  assert.match(rig.interlock!.words, /door/i);
  const p0 = await projector();
  assert.equal(p0.configured, true);
  assert.match(p0.description, new RegExp(calibration.sha256.slice(0, 12)), 'the projector names its calibration');
  assert.equal(p0.showing, 'nothing');

  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'tandem-station-cell-parts-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 800 },
  });
  t.after(async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const problems = pageProblems(page);
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  await page.waitForFunction(() => !(document.getElementById('interlock') as HTMLElement).hidden);
  assert.match((await page.textContent('#interlock')) ?? '', /door/i, 'the status bar says the door is open');
  // The Rig page names the calibrations the station runs with, and the store's (the projector's was stored at start).
  const cals = await api<CalibrationsView>('/api/calibrations');
  assert.equal(cals.inUse.find((c) => c.what === 'projector')?.sha256, calibration.sha256);
  assert.equal(cals.stored.find((k) => k.kind === 'projector')?.newest.sha256, calibration.sha256);
  assert.match(cals.inUse.find((c) => c.what === 'sim twin physics')?.name ?? '', /\S/);
  await page.waitForFunction(
    (sha) => (document.getElementById('rig-calibrations')?.textContent ?? '').includes(sha),
    calibration.sha256.slice(0, 12),
  );
  await page.screenshot({ path: join(SHOTS, 'rig-calibrations.png'), fullPage: true });
  // The projector's page, as a second window on the projector's display (its address's fragment carries the token).
  const wall = await browser.newPage();
  await wall.setViewportSize({ width: 960, height: 540 });
  await wall.goto(`${station.base}${PROJECTOR_PAGE_PATH}#token=${station.token}`);
  await wall.waitForFunction(() => document.body.dataset.showing === 'nothing');

  const set = await api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });
  await api('/api/sessions', {
    layoutSet: set.sha256,
    policies: ['code:hold'],
    perLayout: 1,
    blind: false,
    seconds: 4,
    operator: 'Ada (e2e)',
  });
  await waitFor(async () => (await session())?.phase === 'paused', 60_000);
  const held = await session();
  assert.ok(
    held.lines.some((l) => /not safe to run: .*door/i.test(l)),
    held.lines.join(' | '),
  );
  assert.match(held.safety.interlocks, /^OPEN .*door/i);
  assert.equal((await projector()).showing, 'nothing', 'no footprints while the cell is not safe');
  await page.keyboard.press('3');
  await page.waitForSelector('#session-projector');
  await page.screenshot({ path: join(SHOTS, 'session-interlock-open.png') });

  plc.setInput('doorClosed', true);
  await waitFor(async () => /^closed/.test((await session()).safety.interlocks), 10_000);
  await answer('paused', { action: 'carry-on' });
  await waitFor(async () => (await session()).phase === 'place', 30_000);
  const shown = await projector();
  assert.equal(shown.showing, 'layout');
  assert.equal(shown.layoutIndex, 0);
  assert.equal(shown.layoutSetSha256, set.sha256);
  await wall.waitForFunction(
    (seq) =>
      document.body.dataset.showing === 'layout' &&
      Number(document.body.dataset.seq) >= seq &&
      (document.getElementById('projected') as HTMLImageElement).naturalWidth > 0 &&
      !(document.getElementById('projected') as HTMLImageElement).hidden,
    shown.seq,
  );
  const frame = await fetch(`${station.base}${PROJECTOR_FRAME_PATH}`, { headers: { [TOKEN_HEADER]: station.token } });
  assert.equal(frame.headers.get('content-type'), 'image/png');
  const png = Buffer.from(await frame.arrayBuffer());
  const meta = await sharp(png).metadata();
  assert.deepEqual(
    [meta.width, meta.height],
    [RESOLUTION.widthPx, RESOLUTION.heightPx],
    'the frame is in the projector’s pixels',
  );
  const stats = await sharp(png).stats();
  assert.ok(
    stats.channels.some((c) => c.max > 100),
    'the footprints are drawn, not black',
  );
  await wall.screenshot({ path: join(SHOTS, 'projector-layout.png') });
  await page.waitForFunction(() =>
    /footprints on the table/.test(document.getElementById('session-projector')?.textContent ?? ''),
  );
  await page.screenshot({ path: join(SHOTS, 'session-projecting.png') });

  // Confirm the placement: black before the arms move, then the rollout.
  await answer('place', { action: 'confirm' });
  await waitFor(async () => (await session()).phase === 'running', 30_000);
  const dark = await projector();
  assert.equal(dark.showing, 'black', 'the projector is black while the policy runs');
  await wall.waitForFunction(
    () =>
      document.body.dataset.showing === 'black' && (document.getElementById('projected') as HTMLImageElement).hidden,
  );
  // Mid-episode: once the arms are powered under the policy (before that, opening the door would
  // refuse the activation instead — a different, also safe, outcome).
  await waitFor(async () => (await api<RigStatus>('/api/rig')).mode === 'active', 30_000);
  plc.setInput('doorClosed', false);
  await waitFor(async () => ['decide', 'score', 'reset'].includes((await session()).phase), 60_000);
  const after = await session();
  // Not scored: the operator clears the table, then is offered the redo.
  assert.notEqual(after.phase, 'score', `an interlock stop is not scored: ${JSON.stringify(after.prompt)}`);
  assert.ok(
    after.lines.some((l) => /does not count: .*door/i.test(l)),
    after.lines.join(' | '),
  );
  const rolloutId = (await api<{ id: number }[]>('/api/rollouts?limit=1'))[0].id;
  const stored = await api<RolloutDetail>(`/api/rollouts/${rolloutId}`);
  assert.equal(stored.status, 'aborted', JSON.stringify(stored));
  assert.match(stored.statusReason ?? '', /door/i, 'the stored rollout says the door stopped it');
  await page.screenshot({ path: join(SHOTS, 'session-interlock-stop.png') });
  assert.deepEqual(problems, [], 'no page errors');
});
