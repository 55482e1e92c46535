/**
 * A station that crashes under an open tab, in Debian's headless chromium against real `tandem
 * station` processes (emulated cell, paced virtual time): the operator is at the score step when
 * the station is SIGKILLed. The tab says the station is not answering and what to do; Save says
 * "Not stored — the station is not answering", never "Failed to fetch"; the E-stop says it was
 * not sent. The station is started again on the same port and data folder (a new key): the tab
 * says it was restarted and where its new address is kept, and stops asking (no loop of refused
 * requests); the address in that file, pasted into the tab, opens a working page whose Session page
 * flags the session the crash cut off (at its score step) and resumes it there. Screenshots go to
 * test-output/station-ui/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { STATION_ADDRESS_FILE } from '../../src/app/station-serve.js';
import type { LayoutSetSummary, SessionView } from '../../src/server/api-types.js';

const PACED_CELL = { type: 'yam-cell', transport: 'slcan', clock: 'paced' };

async function said(page: Page, selector: string, text: RegExp, timeout = 30_000): Promise<void> {
  await page.waitForFunction(
    ([sel, src]) => new RegExp(src).test(document.querySelector(sel)?.textContent ?? ''),
    [selector, text.source] as const,
    { timeout },
  );
}

test('a station killed under an open tab: the tab says so and how to reopen, Save says not stored, and after a restart it points at the new address instead of looping', async (t) => {
  const first = await startStation({ rigConfig: PACED_CELL });
  t.after(() => first.dispose());
  const { page, problems } = await openStationPage(
    t,
    first,
    'reconnect',
    async (p) => `banner: ${await p.textContent('#station-lost')}; message: ${await p.textContent('#message')}`,
  );

  // A one-rollout session brought to its score step through the API; the operator's tab shows it.
  const set = await first.api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });
  await first.api<SessionView>('/api/sessions', {
    layoutSet: set.sha256,
    policies: ['code:hold'],
    perLayout: 1,
    blind: false,
    seconds: 1,
  });
  await page.goto(first.url.replace('#token=', '#session&token='));
  await page.waitForSelector('#connection.live');
  await page.waitForFunction(
    () => document.getElementById('session-card')?.getAttribute('data-phase') === 'place',
    undefined,
    { timeout: 60_000 },
  );
  await page.keyboard.press('Enter');
  await page.waitForSelector('#session-save-score', { timeout: 60_000 });

  first.child.kill('SIGKILL');
  await said(page, '#station-lost', /The station is not answering/);
  const addressFile = join(first.dataDir, STATION_ADDRESS_FILE);
  assert.match(
    (await page.textContent('#station-address-file')) ?? '',
    new RegExp(`cat ${addressFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    'the tab names the file that keeps the address',
  );
  assert.equal(
    await page.textContent('#rig-mode'),
    'NO STATION',
    'the status bar no longer shows the last rig state it heard',
  );
  await page.click('#session-save-score');
  await said(page, '#message', /^Not stored — the station is not answering \(it stopped or crashed\)\.$/);
  await page.screenshot({ path: join(SHOTS, 'reconnect-station-down.png') });
  await page.keyboard.press('Escape');
  await said(
    page,
    '#message',
    /^E-stop NOT sent — the station is not answering .* Press the cell's hardware E-stop\.$/,
  );

  // Started again on the same port and data folder: a new launch, a new key.
  const second = await startStation({
    rigConfig: PACED_CELL,
    dataDir: first.dataDir,
    env: { PORT: new URL(first.url).port },
  });
  t.after(() => second.stop());
  assert.notEqual(second.url, first.url, 'a new launch has a new key');
  assert.equal(readFileSync(addressFile, 'utf8').trim(), second.url, 'the file keeps the new address');
  await said(page, '#station-lost', /The station was restarted: open its new address/);
  assert.match((await page.textContent('#station-lost')) ?? '', /this page holds the old one/);
  await page.screenshot({ path: join(SHOTS, 'reconnect-station-restarted.png') });
  // It stops asking: the old key will never work again.
  let asked = 0;
  page.on('request', (r) => {
    if (r.url().includes('/api/')) asked++;
  });
  await page.waitForTimeout(2500);
  assert.equal(asked, 0, 'no requests with the old key after the tab knows the station was restarted');
  await page.click('#session-save-score');
  await said(
    page,
    '#message',
    /^Not stored — the station was restarted, and this page still has the old launch's key: open the station's new address\.$/,
  );

  // The operator pastes the address from the file into this tab (only its fragment differs): a working page again.
  await page.goto(readFileSync(addressFile, 'utf8').trim());
  await page.waitForSelector('#connection.live');
  assert.equal(await page.isHidden('#station-lost'), true);
  // The Session page flags the session the crash cut off, where it was, and resumes it at its score.
  await page.keyboard.press('3');
  await said(
    page,
    '#session-interrupted',
    /Session 1 was interrupted.*Rollout 1 of 1 had run and was waiting for its score/,
  );
  assert.match((await page.textContent('#session-list')) ?? '', /interrupted/);
  await page.screenshot({ path: join(SHOTS, 'reconnect-session-interrupted.png') });
  await page.click('#session-interrupted [data-action="resume"]');
  await page.waitForSelector('#session-save-score', { timeout: 30_000 });
  assert.equal(await page.isHidden('#session-interrupted'), true, 'the flag goes once the session is worked again');
  assert.ok(!problems.some((p) => /Failed to fetch/.test(p)), problems.join('\n'));
});
