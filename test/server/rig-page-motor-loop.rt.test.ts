/**
 * The Rig page's Motor loop panel on a station whose 'yam-can' rig runs in its own thread (over
 * socat ptys to emulated arms in a thread of their own), in headless chromium: before a hold it
 * says no loop has run; once the operator holds, it shows the rig thread's own statistics — the
 * rate against 250 Hz, jitter, late cycles, watchdog holds, the longest command age. The screenshot
 * goes to test-output/station-ui/rig-motor-loop.png for a person to look at.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { startStation } from '../helpers/station-process.js';
import { startEmulatorThread } from '../helpers/emulator-thread.js';

test("the Rig page shows the rig thread's motor loop statistics while the operator holds", async (t) => {
  const emu = await startEmulatorThread();
  t.after(() => emu.stop());
  const station = await startStation({
    rigConfig: { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
  });
  t.after(() => station.dispose());
  const { page } = await openStationPage(
    t,
    station,
    'rig-motor-loop',
    async (p) => `motor loop: ${await p.textContent('#motor-loop')}; message: ${await p.textContent('#message')}`,
  );
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  assert.match((await page.textContent('#motor-loop')) ?? '', /No loop has run yet/);
  await page.keyboard.press('h');
  await page.waitForFunction(
    () => /rig thread/.test(document.getElementById('motor-loop')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  );
  // Let the statistics gather a second of cycles, then read them as the operator does.
  await page.waitForFunction(
    () => /in (\d{3,}) cycles/.test(document.getElementById('motor-loop')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  );
  const text = (await page.textContent('#motor-loop')) ?? '';
  assert.match(text, /rate[\d.]+ Hz of 250 Hz — /);
  assert.match(text, /jitterp50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms/);
  assert.match(text, /late \/ overruns\d+ late, \d+ overruns in \d+ cycles/);
  assert.match(text, /watchdog holds\d+/);
  assert.match(text, /longest command age\d+ ms/);
  assert.match(text, /measured bythe rig thread/);
  await page.screenshot({ path: join(SHOTS, 'rig-motor-loop.png') });
  await page.keyboard.press('d');
});
