/**
 * Issue 30's "done when", end to end in Debian's headless chromium against real `tandem station`
 * processes on the emulated cell (paced virtual time): an operator runs a blind two-policy session
 * — double-clicks Start (one session), aborts a rollout mid-episode (S) and redoes it, then the
 * station is SIGKILLed mid-rollout and started again with the old tab open: the tab says the
 * station is not answering, then that it was restarted and where its new address is kept; the
 * operator pastes that address into the tab, finds the session flagged as interrupted, resumes it
 * (the cut-off rollout is offered for redo), finishes it, and reads the A/B verdict and the blind
 * key in the Results view. Once it has ended the card and the verdict say so (never "keep going"),
 * the log names the rig in the operator's words (no rig type id), and the projector's terminal
 * commands wait behind "details". Every step is a screenshot in test-output/station-ui/
 * (session-e2e-*.png).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { fillSessionPlan, openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { STATION_ADDRESS_FILE } from '../../src/app/station-serve.js';
import type { LayoutSetSummary, RolloutSummary, SessionSummary } from '../../src/server/api-types.js';

const PACED_CELL = { type: 'yam-cell', transport: 'slcan', clock: 'paced' };
const shot = (page: Page, name: string): Promise<Buffer> =>
  page.screenshot({ path: join(SHOTS, `session-e2e-${name}.png`) });

async function waitPhase(page: Page, phases: readonly string[], timeout = 120_000): Promise<string> {
  await page.waitForFunction(
    (ps) => ps.includes(document.getElementById('session-card')?.getAttribute('data-phase') ?? ''),
    phases,
    { timeout },
  );
  return (await page.getAttribute('#session-card', 'data-phase'))!;
}

async function said(page: Page, selector: string, text: RegExp, timeout = 30_000): Promise<void> {
  await page.waitForFunction(
    ([sel, src]) => new RegExp(src, 's').test(document.querySelector(sel)?.textContent ?? ''),
    [selector, text.source] as const,
    { timeout },
  );
}

/** Places (Enter), lets the policy run, and saves a count at the score step; then clears the table. */
async function placeRunScore(page: Page): Promise<void> {
  await waitPhase(page, ['place']);
  await page.keyboard.press('Enter');
  const at = await waitPhase(page, ['score', 'reset', 'decide']);
  assert.equal(
    at,
    'score',
    `the rollout is scored, not ended unscored: ${(await page.textContent('#session-step')) ?? ''}`,
  );
  await page.keyboard.press('Enter');
  await waitPhase(page, ['reset']);
  await page.keyboard.press('Enter');
}

test("an operator's blind session through a station crash: double-clicked start, abort and redo, SIGKILL and restart under the open tab, resume, finish, verdict and key", async (t) => {
  const first = await startStation({ rigConfig: PACED_CELL });
  t.after(() => first.dispose());
  const { page, problems } = await openStationPage(
    t,
    first,
    'session-e2e',
    async (p) =>
      `banner: ${await p.textContent('#station-lost')}; message: ${await p.textContent('#message')}; card: ${await p.textContent('#session-card')}`,
  );
  const set = await first.api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });

  // Plan: two policies, blind (the default), one layout: two rollouts of 3 s. A double click starts one session.
  await fillSessionPlan(page, first.url, set.sha256, 'code:hold, code:bottles-in-the-bin');
  await page.fill('#session-seconds', '3');
  await page.dblclick('#session-start');
  await waitPhase(page, ['place']);
  // No projector: a plain sentence; the terminal commands wait behind "details".
  assert.equal(
    await page.locator('#session-projector-now').innerText(),
    'No projector is set up: place each layout from its picture on the card.',
  );
  assert.equal(await page.locator('#session-projector details p').isVisible(), false, 'the commands are folded away');
  assert.match((await page.locator('#session-projector details p').textContent()) ?? '', /tandem projector calibrate/);
  const sessions = await first.api<SessionSummary[]>('/api/sessions');
  assert.equal(sessions.length, 1, 'a double click starts one session');
  const id = sessions[0].id;
  await shot(page, '1-place');

  // Rollout 1: placed, running, aborted (S) mid-episode; the table cleared; redone.
  await page.keyboard.press('Enter');
  await waitPhase(page, ['running']);
  await shot(page, '2-running');
  await page.keyboard.press('s');
  await waitPhase(page, ['reset']);
  await page.keyboard.press('Enter');
  await waitPhase(page, ['decide']);
  await said(page, '#session-step', /Stopped by the operator/);
  assert.equal(
    await page.textContent('#session-why'),
    'Stopped by the operator.',
    'the reason is said once, not twice',
  );
  await shot(page, '3-aborted-offer-redo');
  await page.keyboard.press('Enter');

  // The redo runs; the station is killed in the middle of it.
  await waitPhase(page, ['place']);
  await page.keyboard.press('Enter');
  await waitPhase(page, ['running']);
  await page.waitForTimeout(800);
  first.child.kill('SIGKILL');
  await said(page, '#station-lost', /The station is not answering/);
  assert.match(
    (await page.textContent('#run-summary')) ?? '',
    /^Last known: Session \d+: policy [AB] running/,
    'the status bar does not say the rollout still runs',
  );
  const frozen = await page.textContent('#session-card');
  await page.waitForTimeout(1200);
  assert.equal(
    await page.textContent('#session-card'),
    frozen,
    'the running bar stops moving once the station is gone',
  );
  await shot(page, '4-station-killed');

  // Started again (same port, same data folder, a new key): the old tab says so and where the address is.
  const second = await startStation({
    rigConfig: PACED_CELL,
    dataDir: first.dataDir,
    env: { PORT: new URL(first.url).port },
  });
  t.after(() => second.stop());
  const addressFile = join(first.dataDir, STATION_ADDRESS_FILE);
  await said(page, '#station-lost', /The station was restarted: open its new address/);
  assert.ok(
    ((await page.textContent('#station-address-file')) ?? '').endsWith(addressFile),
    'the tab names the address file',
  );
  await shot(page, '5-station-restarted');

  // The operator pastes the address from the file into the tab: the Session page flags the cut-off session.
  await page.goto(readFileSync(addressFile, 'utf8').trim());
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('3');
  await said(
    page,
    '#session-interrupted',
    new RegExp(`Session ${id} was interrupted.*Rollout 1 of 2 was running: on resume it is marked cut off`),
  );
  await shot(page, '6-interrupted');
  await page.click('#session-interrupted [data-action="resume"]');
  // The cut-off rollout: the table is cleared, then it is offered for redo, and redone.
  await waitPhase(page, ['reset']);
  await page.keyboard.press('Enter');
  await waitPhase(page, ['decide']);
  await said(page, '#session-step', /Cut off/);
  await shot(page, '7-cut-off-offer-redo');
  await page.keyboard.press('Enter');

  // Both rollouts placed, run and scored: the session ends.
  await placeRunScore(page);
  await placeRunScore(page);
  await waitPhase(page, ['ended']);

  // The Results view: the A/B verdict and, now that it ended, the blind key.
  await said(page, '#session-results h2', /\(ended\)/);
  await said(page, '#session-verdict', /1 pair scored/);
  // Ended: the card names the session, not a rollout or a policy; the verdict says it is over and what the data shows.
  assert.equal(await page.locator('#session-title').innerText(), `Session ${id} ended`);
  assert.equal(await page.locator('#session-label').count(), 0, 'no policy pill on an ended card');
  const verdict = await page.locator('#session-verdict').innerText();
  assert.match(
    verdict,
    /^The session is over: after 1 pair no difference between policy A and policy B is clear \(policy A − policy B [+-]\d\.\d\d, 95% bounds/,
  );
  assert.doesNotMatch(verdict, /Keep going/i);
  assert.equal(
    await page.locator('#session-analysis').isVisible(),
    false,
    'no pre-registered analysis in this plan: no panel for one',
  );
  // The log names the rig as the operator knows it, never by its config type.
  const log = await page.locator('#session-lines').innerText();
  assert.match(log, /Rollout 2: policy [AB] runs for 3 s — rig: emulated cell \(no hardware\)\./);
  assert.doesNotMatch(await page.locator('#view-session').innerText(), /yam-cell/);
  const key = (await page.textContent('#session-key')) ?? '';
  assert.match(key, /policy A\s*code:(hold|bottles-in-the-bin)/);
  assert.match(key, /policy B\s*code:(hold|bottles-in-the-bin)/);
  await page.screenshot({ path: join(SHOTS, 'session-e2e-8-results.png'), fullPage: true });
  // Each episode opens its stored rollout (its detail and recording) from the Results view.
  await page.locator('#session-results details summary').click();
  const open = page.locator('#session-results [data-open-rollout]').first();
  const rolloutId = await open.getAttribute('data-open-rollout');
  await open.click();
  await said(page, '#rollout-detail h2', new RegExp(`^Rollout ${rolloutId}$`));
  assert.match(await page.locator('#rollout-detail').innerText(), /recording\s*\S+\.mcap/);
  await page.screenshot({ path: join(SHOTS, 'session-e2e-9-rollout-from-results.png'), fullPage: true });
  // The Rollouts list followed the session: no scored rollout still reads "awaiting score".
  const stored = await second.api<RolloutSummary[]>('/api/rollouts');
  for (const r of stored.filter((x) => x.progress !== null)) {
    await said(page, `#view-rollouts tr[data-rollout="${r.id}"]`, /\d\.\d\d/);
  }

  // What the store kept: the aborted and the cut-off attempts unscored, two scored rollouts, the session ended.
  const ended = (await second.api<SessionSummary[]>('/api/sessions')).find((s) => s.id === id)!;
  assert.notEqual(ended.endedAt, null);
  assert.equal(ended.scored, 2);
  assert.equal(ended.interrupted, null);
  const rollouts = await second.api<RolloutSummary[]>('/api/rollouts');
  assert.ok(
    rollouts.some((r) => r.statusReason === 'stopped by the operator'),
    JSON.stringify(rollouts.map((r) => [r.status, r.statusReason])),
  );
  assert.ok(!problems.some((p) => /Failed to fetch|TypeError/.test(p)), problems.join('\n'));
});
