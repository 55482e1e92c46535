import type { TestContext } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM_PATH } from '../../src/sim/render/chromium-renderer.js';
import { PROJECT_ROOT } from './cli.js';
import { pageProblems } from './page-problems.js';
import type { StationProcess } from './station-process.js';

/** Where the station UI tests leave their screenshots (looked at by people, never compared). */
export const STATION_SHOTS = join(PROJECT_ROOT, 'test-output', 'station-ui');

/**
 * Debian's headless chromium on a fresh profile, 1280×800, for an e2e test of `station`. When the
 * test ends it leaves `NAME-last-state.png`, what `lastWords` reads off the page and the station's
 * stderr as diagnostics (what a failed step needs), then closes the browser and removes the profile.
 */
export async function openStationPage(
  t: TestContext,
  station: StationProcess,
  name: string,
  lastWords?: (page: Page) => Promise<string>,
): Promise<{ page: Page; problems: string[] }> {
  mkdirSync(STATION_SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), `tandem-${name}-chromium-`));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 800 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  t.after(async () => {
    if (!page.isClosed()) {
      await page.screenshot({ path: join(STATION_SHOTS, `${name}-last-state.png`), fullPage: true }).catch(() => {});
      if (lastWords)
        t.diagnostic(await lastWords(page).catch((e: Error) => `(the page could not be read: ${e.message})`));
    }
    t.diagnostic(`station stderr: ${station.stderr()}`);
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return { page, problems: pageProblems(page) };
}

/** The Sessions page (key 3) with layout set `setSha256` chosen and `policies` typed: where the session e2e tests start. */
export async function fillSessionPlan(
  page: Page,
  stationUrl: string,
  setSha256: string,
  policies: string,
): Promise<void> {
  await page.goto(stationUrl);
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('3');
  await page.waitForFunction(
    (sha) =>
      Array.from((document.getElementById('session-layout-set') as HTMLSelectElement).options).some(
        (o) => o.value === sha,
      ),
    setSha256,
  );
  await page.selectOption('#session-layout-set', setSha256);
  await page.fill('#session-policies', policies);
}
