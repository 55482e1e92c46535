/**
 * The Session page's takeover, in Debian's headless chromium against a real `tandem station` on
 * the emulated cell (paced virtual time) whose station config names an emulated YAM leader: while
 * a session rollout runs, the card says the policy drives and offers Take over (E); E takes over —
 * the card says the operator holds the arms — and E gives back, with the stretch counted. The
 * stretch is stored with the session's rollout (aborted with S, stored all the same) and the
 * session's results count it as an assist.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { openStationPage } from '../helpers/station-page.js';
import { openStore } from '../../src/store/store.js';
import type { LayoutSetSummary, SessionView } from '../../src/server/api-types.js';

const takeoverBox = (page: Page, driving: boolean): Promise<unknown> =>
  page.waitForFunction(
    (d) => document.getElementById('session-takeover')?.getAttribute('data-driving') === String(d),
    driving,
    { timeout: 60_000 },
  );

test('on the Session page E takes over a running session rollout with the leader and gives it back; the stretch is counted and stored', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-station-serve-'));
  const config = join(dataDir, 'station.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      rig: { type: 'yam-cell', transport: 'slcan', clock: 'paced' },
      leader: { kind: 'emulated-yam' },
    }),
  );
  const station = await startStation({ dataDir, args: ['--station-config', config] });
  t.after(() => station.dispose());
  const { page, problems } = await openStationPage(
    t,
    station,
    'session-takeover',
    async (p) => `card: ${await p.textContent('#session-card')}; lines: ${await p.textContent('#session-lines')}`,
  );
  const set = await station.api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('3');
  const started = await station.api<SessionView>('/api/sessions', {
    layoutSet: set.sha256,
    policies: ['code:hold'],
    perLayout: 1,
    blind: false,
    seconds: 8,
  });
  assert.equal(started.takeover, null, 'nothing to take over before a rollout runs');
  await page.waitForFunction(() => document.getElementById('session-card')?.getAttribute('data-phase') === 'place');
  await page.keyboard.press('Enter');
  // Running: the policy drives, and the card offers the takeover.
  await takeoverBox(page, false);
  assert.match((await page.textContent('#session-takeover-toggle')) ?? '', /^Take over/);
  await page.keyboard.press('e');
  await takeoverBox(page, true);
  assert.match((await page.textContent('#session-step')) ?? '', /You hold the arms/);
  assert.match((await page.textContent('#session-takeover-toggle')) ?? '', /^Give back/);
  await page.click('#session-takeover-toggle');
  await takeoverBox(page, false);
  assert.match(
    (await page.textContent('#session-takeover-count')) ?? '',
    /^1 takeover in this rollout, 1 in the session/,
  );
  // Aborted (S) rather than run to its end, to keep the test short: it is stored all the same, its stretch with it.
  await page.keyboard.press('s');
  await page.waitForFunction(
    () => document.getElementById('session-card')?.getAttribute('data-phase') === 'reset',
    null,
    {
      timeout: 60_000,
    },
  );
  const store = openStore(join(dataDir, 'tandem.sqlite'));
  try {
    const [r] = store.listRollouts({ sessionId: started.id });
    const stretches = store.listTakeovers(r.id);
    assert.equal(stretches.length, 1, JSON.stringify(stretches));
    assert.equal(stretches[0].open, false);
  } finally {
    store.close();
  }
  // Closed unscored, the session ends; its results count the stretch as an assist.
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('session-card')?.getAttribute('data-phase') === 'decide');
  await page.keyboard.press('n');
  await page.waitForFunction(() =>
    /code:hold 1 in 1 of 1 rollout, \d+ per hour, mean time between/.test(
      document.getElementById('session-assists')?.textContent ?? '',
    ),
  );
  assert.deepEqual(problems, []);
});
