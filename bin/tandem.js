#!/usr/bin/env node
// The tandem CLI. Sources are TypeScript. When build/ (npm run build: scripts/runtime-build.mjs)
// is newer than every source file, the CLI runs that transpiled copy: it starts in ≈1 s instead
// of ≈3 s. Otherwise — a fresh clone, an edited file, TANDEM_FROM_SOURCE=1 — it runs the sources
// through tsx's loader, registered for this process (worker threads register it themselves:
// their *-entry.mjs files).
import { pathToFileURL } from 'node:url';
import { BUILD_DIR, fresh } from '../scripts/runtime-build.mjs';

if (process.env.TANDEM_FROM_SOURCE !== '1' && fresh()) {
  await import(pathToFileURL(`${BUILD_DIR}/src/app/cli.js`).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/app/cli.ts');
}
