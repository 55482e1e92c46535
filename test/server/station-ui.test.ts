/**
 * End to end in Debian's headless chromium (playwright-core, never a downloaded browser) against a
 * real `tandem station` on the emulated cell, as an operator would use it at 1280×800: open the
 * printed URL, see the rig's motors and status, hold with the H key, sample a layout set, run a
 * short rollout from the form, watch it scored, and find it in the stored list. Screenshots go to
 * test-output/station-ui/ (git-ignored) for a person to look at.
 */
import { openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startStation } from '../helpers/station-process.js';
import { until } from '../helpers/until.js';

test('an operator opens the station in chromium, holds the rig, and runs a rollout on the emulated cell that comes back scored', async (t) => {
  // The emulated cell on paced virtual time: chromium, the station and the policy worker share this
  // machine's cores, and a starved station slows down rather than reading as silent motors.
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', clock: 'paced' } });
  t.after(() => station.dispose());
  const { page, problems } = await openStationPage(
    t,
    station,
    'station',
    async (p) => `page message: ${await p.textContent('#message')}; run: ${await p.textContent('#run-panel')}`,
  );

  let rigStates = 0;
  page.on('websocket', (ws) =>
    ws.on('framereceived', (f) => {
      if (String(f.payload).includes('"type":"rig"')) rigStates++;
    }),
  );
  await page.goto(station.url);
  assert.equal(new URL(page.url()).search, '', 'the token left the address bar');
  // The rig view: 14 motors of two arms, heard over the emulated CAN bus, motors off.
  await page.waitForSelector('#connection.live');
  await page.waitForFunction(() => document.querySelectorAll('#motor-table tr[data-motor]').length === 14);
  assert.equal(await page.textContent('#rig-mode'), 'READY · OFF');
  const firstMotor = await page.textContent('#motor-table tr[data-motor="left arm joint 1"]');
  assert.match(firstMotor ?? '', /DM4340.*°C.*disabled/);
  assert.match((await page.textContent('#view-rig')) ?? '', /keeping up/);
  // The idle rig's state keeps streaming (20 a second); the status bar, an aria-live region read
  // out on every change, is rewritten only when its words change: ten states later, not once.
  await page.evaluate(() => {
    const w = window as unknown as { statusWrites: number };
    w.statusWrites = 0;
    new MutationObserver((m) => (w.statusWrites += m.length)).observe(document.getElementById('statusbar')!, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
  });
  const statesBefore = rigStates;
  await until(() => rigStates >= statesBefore + 10, 30_000, 50);
  assert.equal(
    await page.evaluate(() => (window as unknown as { statusWrites: number }).statusWrites),
    0,
    'the status bar is not rewritten while nothing on it changes',
  );

  // H holds (on paced virtual time the cell cannot fall behind, so activation is never refused for a busy machine).
  await page.keyboard.press('h');
  await page.waitForFunction(
    () =>
      document.getElementById('rig-mode')?.textContent === 'ACTIVE' ||
      /Not activating/.test(document.getElementById('message')?.textContent ?? ''),
  );
  assert.equal(await page.textContent('#rig-mode'), 'ACTIVE', (await page.textContent('#message')) ?? '');
  await page.waitForFunction(
    () =>
      document.querySelector('#motor-table tr[data-motor="right gripper"]')?.textContent?.includes('enabled') ?? false,
  );
  await page.screenshot({ path: join(SHOTS, 'rig-holding.png') });

  // Rollouts: a layout set from the form, then a 3 s rollout of the scripted bottles policy.
  await page.keyboard.press('2');
  await page.fill('#sample-tiers', '1');
  await page.fill('#sample-per-tier', '1');
  await page.fill('#sample-seed', '7');
  await page.click('#sample-set');
  await page.waitForFunction(
    () => (document.getElementById('run-layout-set') as HTMLSelectElement).value.length === 64,
  );
  await page.fill('#run-policy', 'code:bottles-in-the-bin');
  await page.fill('#run-seconds', '3');
  await page.locator('#rollout-table').click(); // leave the text field, so R is a shortcut
  await page.keyboard.press('r');
  await page.waitForFunction(() => document.getElementById('run-panel')?.dataset.phase === 'running', undefined, {
    timeout: 60_000,
  });
  await page.screenshot({ path: join(SHOTS, 'rollout-running.png') });
  assert.equal(
    await page.textContent('#rig-mode').then((t) => /ACTIVE|HOLDING/.test(t ?? '')),
    true,
    'the status bar shows the rig powered while the rollout runs',
  );
  await page.waitForFunction(
    () => ['done', 'failed'].includes(document.getElementById('run-panel')?.dataset.phase ?? ''),
    undefined,
    { timeout: 90_000 },
  );
  const message = await page.textContent('#run-message');
  assert.equal(await page.getAttribute('#run-panel', 'data-phase'), 'done', message ?? '');
  assert.match(
    (await page.textContent('#run-score')) ?? '',
    /^progress [01]\.\d\d$/,
    `scored by the cell's scripted operator: ${message}`,
  );
  assert.match(message ?? '', /^Rollout 1 scored [01]\.\d\d by the scripted operator/);

  // It is in the stored list, and its detail says where it ran.
  await page.waitForSelector('#rollout-table tr[data-rollout="1"]');
  await page.click('#rollout-table tr[data-rollout="1"]');
  await page.waitForFunction(
    () => document.getElementById('rollout-detail')?.textContent?.includes('Rollout 1') ?? false,
  );
  const detail = (await page.textContent('#rollout-detail')) ?? '';
  assert.match(detail, /code:bottles-in-the-bin/);
  assert.match(detail, /the emulated cell — a rehearsal, not a result/);
  assert.match(detail, /recording.*\/episodes\/[^ ]+\.mcap/, "the detail names the rollout's episode file");
  assert.match(detail, /scored by.*scripted operator/);
  assert.equal(await page.textContent('#rig-mode'), 'DAMPED · OFF', 'the rollout ends with the rig damped');
  await page.screenshot({ path: join(SHOTS, 'rollout-scored.png') });

  // E-stop from the keyboard, whatever has focus.
  await page.focus('#run-policy');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => /E-stop sent/.test(document.getElementById('message')?.textContent ?? ''));
  await page.keyboard.press('3');
  assert.match((await page.textContent('#view-session')) ?? '', /Plan a session/);
  assert.deepEqual(problems, [], 'no errors in the page');
});
