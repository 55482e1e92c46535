#!/usr/bin/env node
// Node 20's test runner takes no globs, so we find the test files ourselves.
// One test file at a time: the driver and control-loop tests measure real-time behaviour, and on a
// 2-core machine a sim sweep in a neighbouring file starves them into false faults.
// Usage: node scripts/run-tests.mjs [path-prefix ...]   (default: every test/**/*.test.ts)
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'fixtures') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}
const prefixes = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const files = walk(join(root, 'test'))
  .filter((f) => prefixes.length === 0 || prefixes.some((p) => f.startsWith(p)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${prefixes.join(' ') || 'test/'}`);
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...passThrough, ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
