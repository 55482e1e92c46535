/**
 * End to end in Debian's headless chromium against a real `tandem station` on the emulated cell:
 * the operator starts a teleop recording on the Teleop page with the emulated YAM leader and one
 * test-pattern camera, sees the follower's joints move live, discards the first take with ← (it is
 * re-recorded), lets the second run out, and finds both in the take list — the kept one with its
 * dropped-frame count, the discarded one moved aside, both files on the disk. Screenshots go to
 * test-output/station-ui/.
 */
import { pageProblems } from '../helpers/page-problems.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM_PATH } from '../../src/sim/render/chromium-renderer.js';
import { TOKEN_HEADER, type TeleopView } from '../../src/server/api-types.js';

const SHOTS = join(PROJECT_ROOT, 'test-output', 'station-ui');

test('an operator records a teleop episode in chromium on the emulated cell: live joints, a discarded take re-recorded, the kept one listed with its dropped frames', async (t) => {
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', replyDeadlineMs: 350 } });
  t.after(() => station.dispose());
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'tandem-station-teleop-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, { executablePath: DEFAULT_CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS], viewport: { width: 1280, height: 800 } });
  const page = browser.pages()[0] ?? (await browser.newPage());
  t.after(async () => {
    if (!page.isClosed()) {
      await page.screenshot({ path: join(SHOTS, 'teleop-last-state.png'), fullPage: true }).catch(() => {});
      t.diagnostic(`page message: ${await page.textContent('#message').catch(() => '?')}; live: ${await page.textContent('#teleop-live').catch(() => '?')}`);
    }
    t.diagnostic(`station stderr: ${station.stderr()}`);
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const problems = pageProblems(page);

  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('4');
  await page.fill('#teleop-episodes', '1');
  await page.fill('#teleop-seconds', '8');
  await page.fill('#teleop-reset', '1');
  await page.selectOption('#teleop-cameras', 'testsrc:1');
  await page.screenshot({ path: join(SHOTS, 'teleop-plan.png') });
  await page.click('#teleop-start');

  await page.waitForFunction(() => document.getElementById('teleop-live')?.getAttribute('data-phase') === 'take', undefined, { timeout: 90_000 });
  assert.match((await page.textContent('#teleop-phase')) ?? '', /Recording episode 1 of 1/);
  // The follower's joints, live: the leader's scripted hand moves them during the take.
  const joint = async (): Promise<string> => (await page.textContent('#teleop-arms .jrow[data-joint="left joint 1"] .num')) ?? '';
  const first = await joint();
  await page.waitForFunction((was) => document.querySelector('#teleop-arms .jrow[data-joint="left joint 1"] .num')?.textContent !== was, first, { timeout: 6_000 });
  await page.screenshot({ path: join(SHOTS, 'teleop-recording.png') });

  // ← discards the take in flight; the episode is recorded again.
  await page.locator('#teleop-phase').click();
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.querySelector('#teleop-take-table tr[data-state="discarded"]') !== null, undefined, { timeout: 30_000 });
  await page.waitForFunction(() => ['done', 'stopped', 'failed'].includes(document.getElementById('teleop-live')?.getAttribute('data-phase') ?? ''), undefined, { timeout: 90_000 });
  await page.screenshot({ path: join(SHOTS, 'teleop-done.png') });
  assert.equal(await page.getAttribute('#teleop-live', 'data-phase'), 'done', (await page.textContent('#teleop-live')) ?? '');

  const res = await fetch(`${station.base}/api/teleop`, { headers: { [TOKEN_HEADER]: station.token } });
  const v = (await res.json()) as TeleopView;
  assert.deepEqual(v.takes.map((x) => [x.episodeIndex, x.state]), [[0, 'discarded'], [0, 'kept']]);
  const kept = v.takes[1];
  assert.ok(kept.framesReceived !== null && kept.framesReceived > 0, `the kept take's camera delivered frames: ${JSON.stringify(kept)}`);
  assert.equal(typeof kept.droppedFrames, 'number');
  assert.ok(existsSync(kept.file), `kept file ${kept.file}`);
  assert.match(v.takes[0].file, /\/teleop\/discarded\//, 'the discarded take is moved aside, not deleted');
  assert.ok(existsSync(v.takes[0].file));
  const row = (await page.textContent(`#teleop-take-table tr[data-take="${kept.id}"]`)) ?? '';
  assert.match(row, new RegExp(`^1kept${kept.droppedFrames}${kept.framesReceived}`), 'the list shows the dropped frames and frames of the kept take');
  assert.equal(await page.textContent('#rig-mode').then((m) => /DAMPED|READY/.test(m ?? '')), true, 'the follower is damped after the recording');
  assert.deepEqual(problems, [], 'no errors in the page');
});
