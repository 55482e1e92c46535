/**
 * End to end in Debian's headless chromium against a real `tandem station` on the emulated cell:
 * the operator picks a stored layout for the table, starts a two-episode teleop recording on the
 * Teleop page with the emulated YAM leader and one test-pattern camera, sees the follower's joints
 * move live (the chosen layout on the cell's table), discards the first take with ← (it is
 * re-recorded), lets it run out, stops with Q during the reset, then resumes the stopped session
 * from the page and records episode 2 — and finds all three takes in one session's list: the kept
 * ones with their layout in the file, the resumed one with its dropped-frame count, the discarded
 * one moved aside. Screenshots go to test-output/station-ui/.
 */
import { openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startStation } from '../helpers/station-process.js';
import { TOKEN_HEADER, type LayoutSetSummary, type RigStatus, type TeleopView } from '../../src/server/api-types.js';
import { readIndexed } from '../helpers/mcap.js';
import { EPISODE_METADATA_NAME } from '../../src/record/episode-format.js';

test('an operator records teleop episodes in chromium on the emulated cell: a stored layout on the table, live joints, a discarded take re-recorded, stopped with Q and resumed from the page', async (t) => {
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', replyDeadlineMs: 350 } });
  t.after(() => station.dispose());
  const { page, problems } = await openStationPage(
    t,
    station,
    'teleop',
    async (p) => `page message: ${await p.textContent('#message')}; live: ${await p.textContent('#teleop-live')}`,
  );
  const headers = { [TOKEN_HEADER]: station.token, 'content-type': 'application/json' };
  // A one-bottle tier-1 set: the cell's default table is tier 3 with two bottles, so the layout shows.
  const sampled = await fetch(`${station.base}/api/layout-sets/sample`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 11 }),
  });
  assert.equal(sampled.status, 201, await sampled.clone().text());
  const set = (await sampled.json()) as LayoutSetSummary;
  const phase = (): Promise<string | null> => page.getAttribute('#teleop-live', 'data-phase');

  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('4');
  await page.waitForSelector(`#teleop-layout-set option[value="${set.sha256}"]`, { state: 'attached' });
  await page.fill('#teleop-episodes', '2');
  await page.fill('#teleop-seconds', '6');
  await page.fill('#teleop-reset', '4');
  await page.selectOption('#teleop-cameras', 'testsrc:1');
  await page.selectOption('#teleop-layout-set', set.sha256);
  await page.fill('#teleop-layout', '1');
  await page.screenshot({ path: join(SHOTS, 'teleop-plan.png') });
  await page.click('#teleop-start');

  await page.waitForFunction(
    () => document.getElementById('teleop-live')?.getAttribute('data-phase') === 'take',
    undefined,
    { timeout: 90_000 },
  );
  assert.match((await page.textContent('#teleop-phase')) ?? '', /Recording episode 1 of 2/);
  assert.match(
    (await page.textContent('#teleop-live')) ?? '',
    new RegExp(`layout 1 of set ${set.sha256.slice(0, 10)}`),
  );
  const rig = (await (await fetch(`${station.base}/api/rig`, { headers })).json()) as RigStatus;
  assert.deepEqual(
    [rig.cell?.tier, rig.cell?.objects],
    [1, 1],
    `the chosen tier-1 layout is on the cell's table: ${JSON.stringify(rig.cell)}`,
  );
  // The follower's joints, live: the leader's scripted hand moves them during the take.
  const joint = async (): Promise<string> =>
    (await page.textContent('#teleop-arms .jrow[data-joint="left joint 1"] .num')) ?? '';
  const first = await joint();
  await page.waitForFunction(
    (was) => document.querySelector('#teleop-arms .jrow[data-joint="left joint 1"] .num')?.textContent !== was,
    first,
    { timeout: 6_000 },
  );
  await page.screenshot({ path: join(SHOTS, 'teleop-recording.png') });

  // ← discards the take in flight; the episode is recorded again and runs out.
  await page.locator('#teleop-phase').click();
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(
    () => document.querySelector('#teleop-take-table tr[data-state="discarded"]') !== null,
    undefined,
    { timeout: 30_000 },
  );
  // Q in the reset before episode 2: the session stops, resumable.
  await page.waitForFunction(
    () =>
      document.querySelector('#teleop-take-table tr[data-state="kept"]') !== null &&
      document.getElementById('teleop-live')?.getAttribute('data-phase') === 'reset',
    undefined,
    { timeout: 60_000 },
  );
  await page.keyboard.press('q');
  await page.waitForFunction(
    () =>
      ['stopped', 'done', 'failed'].includes(document.getElementById('teleop-live')?.getAttribute('data-phase') ?? ''),
    undefined,
    { timeout: 60_000 },
  );
  assert.equal(await phase(), 'stopped', (await page.textContent('#teleop-live')) ?? '');
  // The bottom line no longer says the session is recording.
  assert.match(
    (await page.textContent('#message')) ?? '',
    /^Teleop session \d+ stopped: 1 of 2 episodes kept; Resume carries on at episode 2\.$/,
  );
  await page.waitForSelector('#teleop-resume-btn');
  const offer = (await page.textContent('#teleop-resume-what')) ?? '';
  assert.match(
    offer,
    /: 1 of 2 episodes kept — "bottles-in-the-bin", 6 s takes, 4 s resets, emulated-yam, cameras testsrc:1, layout 1 of set/,
  );
  await page.screenshot({ path: join(SHOTS, 'teleop-stopped.png') });
  const stopped = (await (await fetch(`${station.base}/api/teleop`, { headers })).json()) as TeleopView;

  // Resume from the page: the same session records episode 2 with the same settings and layout.
  await page.click('#teleop-resume-btn');
  await page.waitForFunction(
    () => document.getElementById('teleop-live')?.getAttribute('data-phase') === 'take',
    undefined,
    { timeout: 90_000 },
  );
  assert.match((await page.textContent('#teleop-phase')) ?? '', /Recording episode 2 of 2/);
  assert.match(
    (await page.textContent('#teleop-live')) ?? '',
    new RegExp(`session ${stopped.sessionId} \\(resumed\\)`),
  );
  const again = (await (await fetch(`${station.base}/api/rig`, { headers })).json()) as RigStatus;
  assert.deepEqual(
    [again.cell?.tier, again.cell?.objects],
    [1, 1],
    'the resumed take has the same layout on the table',
  );
  await page.waitForFunction(
    () =>
      ['done', 'stopped', 'failed'].includes(document.getElementById('teleop-live')?.getAttribute('data-phase') ?? ''),
    undefined,
    { timeout: 90_000 },
  );
  await page.screenshot({ path: join(SHOTS, 'teleop-done.png') });
  assert.equal(await phase(), 'done', (await page.textContent('#teleop-live')) ?? '');
  assert.match((await page.textContent('#message')) ?? '', /^Teleop session \d+ is done: 2 of 2 episodes kept\.$/);
  assert.equal(await page.isHidden('#teleop-resume'), true, 'a finished session is not offered for resume');

  const res = await fetch(`${station.base}/api/teleop`, { headers });
  const v = (await res.json()) as TeleopView;
  assert.equal(v.sessionId, stopped.sessionId, 'one session across the stop');
  assert.equal(v.resumed, true);
  assert.deepEqual(
    v.takes.map((x) => [x.episodeIndex, x.state]),
    [
      [0, 'discarded'],
      [0, 'kept'],
      [1, 'kept'],
    ],
  );
  const resumedTake = v.takes[2];
  assert.ok(
    (v.takes[1].framesReceived ?? 0) > 0,
    `the take kept before the stop still shows its frame counters: ${JSON.stringify(v.takes[1])}`,
  );
  assert.ok(
    resumedTake.framesReceived !== null && resumedTake.framesReceived > 0,
    `the resumed take's camera delivered frames: ${JSON.stringify(resumedTake)}`,
  );
  assert.equal(typeof resumedTake.droppedFrames, 'number');
  for (const kept of [v.takes[1], resumedTake]) {
    assert.ok(existsSync(kept.file), `kept file ${kept.file}`);
    const meta = (await readIndexed(kept.file)).metadata.get(EPISODE_METADATA_NAME);
    assert.equal(meta?.get('layout_set_sha256'), set.sha256, `${kept.file} records the layout set on the table`);
    assert.equal(meta?.get('layout_index'), '1');
  }
  assert.match(v.takes[0].file, /\/teleop\/discarded\//, 'the discarded take is moved aside, not deleted');
  assert.ok(existsSync(v.takes[0].file));
  const row = (await page.textContent(`#teleop-take-table tr[data-take="${resumedTake.id}"]`)) ?? '';
  assert.match(
    row,
    new RegExp(`^2kept${resumedTake.droppedFrames}${resumedTake.framesReceived}`),
    'the list shows the dropped frames and frames of the resumed take',
  );
  assert.equal(
    await page.textContent('#rig-mode').then((m) => /DAMPED|READY/.test(m ?? '')),
    true,
    'the follower is damped after the recording',
  );
  assert.deepEqual(problems, [], 'no errors in the page');
});
