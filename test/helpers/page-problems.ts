import type { Page } from 'playwright-core';

/** Every console error and uncaught exception the page reports, collected from now on (an e2e test ends asserting none). */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return problems;
}
