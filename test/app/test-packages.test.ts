import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/cli.js';

const SCRIPT = join(PROJECT_ROOT, 'scripts', 'check-test-packages.mjs');

/** Runs the check with PATH holding only a folder of stand-in programs with these names. */
function checkWith(programs: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-path-'));
  try {
    for (const p of programs) {
      writeFileSync(join(dir, p), '#!/bin/sh\n');
      chmodSync(join(dir, p), 0o755);
    }
    const r = spawnSync(process.execPath, [SCRIPT], { env: { PATH: dir, ...env }, encoding: 'utf8' });
    return { code: r.status, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('npm test first says, in one line, which Debian packages are missing and the apt-get command', () => {
  const none = checkWith([]);
  assert.equal(none.code, 1);
  assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
  assert.match(
    none.stderr,
    /install with: sudo apt-get install --no-install-recommends socat chromium ffmpeg redis-server$/m,
  );

  const oneMissing = checkWith(['socat', 'chromium', 'redis-server']);
  assert.equal(oneMissing.code, 1);
  assert.match(
    oneMissing.stderr,
    /needs the Debian package ffmpeg \(not found on PATH\); install with: sudo apt-get install --no-install-recommends ffmpeg$/m,
  );

  assert.deepEqual(checkWith(['socat', 'chromium', 'ffmpeg', 'redis-server']), { code: 0, stderr: '' });
  // A chromium named by TANDEM_CHROMIUM (as the sim cameras take it) counts; a wrong one does not.
  assert.equal(checkWith(['socat', 'ffmpeg', 'redis-server'], { TANDEM_CHROMIUM: process.execPath }).code, 0);
  assert.match(
    checkWith(['socat', 'ffmpeg', 'redis-server'], { TANDEM_CHROMIUM: '/nonexistent/chromium' }).stderr,
    /package chromium /,
  );
});

test('npm test runs the package check before anything else', async () => {
  const pkg = JSON.parse((await import('node:fs')).readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  assert.match(pkg.scripts.test, /^node scripts\/check-test-packages\.mjs && /);
});
