/**
 * End to end in Debian's headless chromium against a real `tandem station` on the emulated cell:
 * an operator plans a blind two-policy session on the Session page, and works two rollouts with
 * the keyboard — places (Enter), watches the policy run, scores (a count the layout cannot have
 * is refused in one sentence and nothing is stored; then a count; the second object by object),
 * clears the table — until the session ends. The plan pre-registers its A/B analysis from the
 * form: its panel is on the page from the first step (letters only) and says after the pair, when
 * the session ends, that it ended without a verdict. The journal and the stored scores are checked
 * through the API. Screenshots (1280×800 and 3840×2160) go to test-output/station-ui/.
 */
import { fillSessionPlan, openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import {
  TOKEN_HEADER,
  type LayoutSetSummary,
  type RolloutDetail,
  type SessionSummary,
} from '../../src/server/api-types.js';

const phase = (page: Page): Promise<string | null> => page.getAttribute('#session-card', 'data-phase');

/** Waits for the session to ask for one of `phases` (a rollout runs in between). */
async function waitPhase(page: Page, phases: readonly string[], timeout = 120_000): Promise<string> {
  await page.waitForFunction(
    (ps) => ps.includes(document.getElementById('session-card')?.getAttribute('data-phase') ?? ''),
    phases,
    { timeout },
  );
  return (await phase(page))!;
}

test('an operator works a blind session in chromium on the emulated cell: two rollouts placed, run and scored with the keyboard, an impossible count refused', async (t) => {
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', clock: 'paced' } });
  t.after(() => station.dispose());
  const { page, problems } = await openStationPage(
    t,
    station,
    'session',
    async (p) => `page message: ${await p.textContent('#message')}; card: ${await p.textContent('#session-card')}`,
  );
  const api = <T>(path: string, body?: unknown): Promise<T> => station.api<T>(path, body);
  // One layout of tier 1: a blind plan of two policies once each is two rollouts.
  const set = await api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });

  await fillSessionPlan(page, station.url, set.sha256, 'code:hold, code:bottles-in-the-bin');
  await page.fill('#session-seconds', '3');
  await page.fill('#session-operator', 'Ada (e2e)');
  await page.check('#session-preregister');
  assert.equal(await page.isChecked('#session-blind'), true, 'blind is the default');
  await page.screenshot({ path: join(SHOTS, 'session-plan.png') });
  await page.click('#session-start');

  const objects = (await api<{ layout: { objects: unknown[] } }>(`/api/layout-sets/${set.sha256}/layouts/0`)).layout
    .objects.length;
  const scoredRollouts: number[] = [];
  for (let rollout = 1; rollout <= 2; ) {
    const at = await waitPhase(page, ['place', 'reset', 'decide', 'score', 'ended']);
    if (at === 'ended') break;
    if (at === 'reset' || at === 'decide') {
      // Only an unscored rollout comes here before its score; on paced virtual time the cell cannot
      // starve, so that is a failure, with the station's words for it.
      assert.fail(`rollout ${rollout} ended unscored (${at}): ${(await page.textContent('#session-step')) ?? ''}`);
    }
    if (at === 'place') {
      const label = (await page.textContent('#session-label')) ?? '';
      assert.match(label, /^policy [AB]$/, 'a blind session shows the label, never the spec');
      if (rollout === 2) {
        // Nor does the Rollouts page's list give it away while the session runs.
        const listed = JSON.stringify(await api<unknown>('/api/rollouts'));
        assert.ok(
          !listed.includes('code:'),
          `rollouts of a running blind session are listed by label: ${listed.slice(0, 300)}`,
        );
        assert.match(listed, /"name":"policy [AB]"/);
        // Nor does Compare: its picker counts none of the session's rollouts, and the policy that
        // ran cannot be compared (its real progress would say which label it is) until the end.
        assert.deepEqual(
          await api<unknown[]>('/api/compare/choices'),
          [],
          'the picker counts no rollout of the running blind session',
        );
        const answers = await Promise.all(
          [1, 2].map(async (id) => {
            const res = await fetch(`${station.base}/api/compare?policy=${id}&layoutSet=${set.sha256}`, {
              headers: { [TOKEN_HEADER]: station.token },
            });
            return { status: res.status, body: JSON.stringify(await res.json()) };
          }),
        );
        assert.ok(
          answers.some((a) => a.status === 409 && /blind session .* has not ended/.test(a.body)),
          JSON.stringify(answers),
        );
        assert.ok(
          answers.every((a) => a.status !== 200),
          `no comparison of a policy of the running blind session: ${JSON.stringify(answers)}`,
        );
      }
      assert.ok(
        !((await page.textContent('#view-session')) ?? '').includes('code:bottles'),
        'no policy spec anywhere on the page while blind',
      );
      assert.match((await page.textContent('#session-steps li.here')) ?? '', /Place/);
      await page.waitForFunction(
        () => (document.getElementById('session-top-view') as HTMLImageElement | null)?.naturalWidth === 900,
      );
      if (rollout === 1) {
        // The pre-registered analysis before any pair: one pair planned, so no rule can hold in it.
        await page.waitForFunction(() =>
          /^No pair scored yet\./.test(document.getElementById('session-analysis-headline')?.textContent ?? ''),
        );
        assert.match(await page.locator('#session-analysis').innerText(), /0 of the plan's 1 pair scored/);
        await page.screenshot({ path: join(SHOTS, 'session-place-1280x800.png') });
        // The same step on a 4K screen without OS scaling: the root font doubles, the card with it.
        await page.setViewportSize({ width: 3840, height: 2160 });
        assert.ok(
          (await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize))) >= 30,
          'readable at 4K',
        );
        await page.screenshot({ path: join(SHOTS, 'session-place-3840x2160.png') });
        await page.setViewportSize({ width: 1280, height: 800 });
      }
      await page.keyboard.press('Enter');
      const next = await waitPhase(page, ['running', 'score', 'reset']);
      if (next === 'running' && rollout === 1) {
        assert.match((await page.textContent('#session-step')) ?? '', /policy [AB] is running/);
        await page.screenshot({ path: join(SHOTS, 'session-running.png') });
      }
      continue;
    }
    // Score: the prompt follows "One moment… the station is storing the last step" once the rollout is stored.
    const prompt =
      objects === 1
        ? /Is the object in the bin\? Count it: 0 or 1\./
        : new RegExp(`How many of the ${objects} objects are in the bin\\?`);
    // A hang guard: on paced virtual time a busy machine slows the rollout and its storing down.
    await page.waitForFunction(
      (src) => new RegExp(src).test(document.getElementById('session-step')?.textContent ?? ''),
      prompt.source,
      { timeout: 120_000 },
    );
    assert.match((await page.textContent('#session-step')) ?? '', prompt);
    if (rollout === 1) {
      await page.fill('#session-count', String(objects + 1));
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => (document.getElementById('session-refusal')?.textContent ?? '') !== '');
      const refusal = (await page.textContent('#session-refusal')) ?? '';
      assert.match(
        refusal,
        new RegExp(
          `^Not stored: Layout 0 has ${objects} objects?: ${objects + 1} cannot be in the bin; enter a whole number from 0 to ${objects}\\.$`,
        ),
      );
      await page.screenshot({ path: join(SHOTS, 'session-score-refused.png') });
      await waitPhase(page, ['score']);
      await page.locator('#session-card .card-title').click(); // out of the field: the arrow keys are the count
      // ↑ past the layout's objects stays at its count; ↓ brings it back: this one scores 0 with a note.
      for (let i = 0; i <= objects; i++) await page.keyboard.press('ArrowUp');
      await page.waitForFunction(
        (n) => (document.getElementById('session-count') as HTMLInputElement | null)?.value === String(n),
        objects,
      );
      for (let i = 0; i < objects; i++) await page.keyboard.press('ArrowDown');
      await page.waitForFunction(
        () => (document.getElementById('session-count') as HTMLInputElement | null)?.value === '0',
      );
      await page.fill('#session-note', 'one bottle in');
      await page.locator('#session-card .card-title').click();
      await page.keyboard.press('Enter');
    } else {
      // Object by object: every object in the bin, with the task's own region name.
      await page.click('#session-objects-toggle');
      assert.equal(
        await page.locator('#session-count').count(),
        0,
        'object by object, the count is not shown (it is not what is saved)',
      );
      for (let i = 0; i < objects; i++) {
        await page.locator('#session-objects .choice[data-choice="in bin"]').nth(i).click();
      }
      await page.screenshot({ path: join(SHOTS, 'session-score-objects.png') });
      await page.click('#session-save-score');
    }
    await waitPhase(page, ['reset']);
    scoredRollouts.push(rollout);
    await page.keyboard.press('Enter');
    rollout++;
  }
  await waitPhase(page, ['ended']);
  // The pair is in (one scored 0, the other 1) and the session is over: the analysis says so, B − A by letters.
  await page.waitForFunction(() =>
    /^No verdict: /.test(document.getElementById('session-analysis-headline')?.textContent ?? ''),
  );
  const analysis = (await page.locator('#session-analysis').innerText()).replace(/\s+/g, ' ');
  assert.match(analysis, /No verdict: the plan's 1 pair is done and neither rule holds\. The session is over\./);
  assert.match(
    analysis,
    /policy B − policy A: [+−]1\.00 bounds 95% confidence sequence: −1\.00 to \+1\.00 \(valid at every look\) pairs 1 of the plan's 1 pair scored/,
  );
  assert.match(
    (await page.textContent('#session-verdict')) ?? '',
    /^The A\/B verdict is the pre-registered analysis above/,
    'one verdict on the page, not two',
  );
  await page.screenshot({ path: join(SHOTS, 'session-ended.png'), fullPage: true });
  assert.match((await page.textContent('#session-progress')) ?? '', /2 of 2 done/);

  // The store has both scores, by the named operator, with the count's note; nothing for the refused count.
  const [s] = await api<SessionSummary[]>('/api/sessions');
  assert.equal(s.scored, 2);
  assert.notEqual(s.endedAt, null);
  const rollouts = await api<{ id: number; status: string }[]>('/api/rollouts');
  const valid = rollouts.filter((r) => r.status === 'valid');
  assert.equal(valid.length, 2, 'two valid rollouts stored');
  const details = await Promise.all(valid.map((r) => api<RolloutDetail>(`/api/rollouts/${r.id}`)));
  const scores = details.map((d) => d.score).sort((a, b) => (a!.progress ?? 0) - (b!.progress ?? 0));
  assert.deepEqual(
    scores.map((x) => x?.operator),
    ['Ada (e2e)', 'Ada (e2e)'],
  );
  assert.equal(scores[0]!.note, 'one bottle in');
  assert.equal(scores[0]!.progress, 0);
  assert.equal(scores[1]!.progress, 1);

  // Readable at 4K: the same card, twice the size, no horizontal scroll at 1280.
  assert.ok(
    (await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0,
    'no horizontal scroll at 1280×800',
  );
  await page.setViewportSize({ width: 3840, height: 2160 });
  await page.screenshot({ path: join(SHOTS, 'session-ended-3840x2160.png') });
  // The one 400 is the refused count (chromium logs every refused request).
  assert.deepEqual(
    problems,
    ['Failed to load resource: the server responded with a status of 400 (Bad Request)'],
    'no errors in the page but the refused count',
  );
});
