import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/store.js';

const CHILD = fileURLToPath(new URL('./write-until-killed.ts', import.meta.url));

test('a process killed mid-write loses no committed rollout and leaves no half-written batch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tandem.sqlite');
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const committed: number[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let buffered = '';
  await new Promise<void>((resolveKilled, reject) => {
    child.on('error', reject);
    child.on('exit', () => resolveKilled());
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffered += d;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('committed ')) committed.push(...line.slice(10).split(' ').map(Number));
      // SIGKILL: no exit handlers, no close, no checkpoint — as close to pulling the plug as a test gets.
      if (committed.length >= 200 && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
  });
  assert.ok(committed.length >= 200, `the writer reported ${committed.length} commits before it ended; stderr: ${stderr}`);

  const store = openStore(file);
  t.after(() => store.close());
  const rows = store.listRollouts();
  const present = new Set(rows.map((r) => r.id));
  const lost = committed.filter((id) => !present.has(id));
  assert.deepEqual(lost, [], 'every rollout reported committed is in the store');
  // Batches are atomic: every rollout present has both of its calibration links, and batches are whole pairs.
  for (const r of rows) assert.equal(r.calibrationSha256s.length, 2, `rollout ${r.id} has both calibrations`);
  assert.equal(rows.length % 2, 0, 'no batch of two was half written');
});
