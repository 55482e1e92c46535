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

test('several processes creating the same new store at once all open it at the latest schema', async (t) => {
  const { LATEST_SCHEMA_VERSION } = await import('../../src/store/migrations.js');
  const Database = (await import('better-sqlite3')).default;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-race-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tandem.sqlite');
  // Hold the write lock on the new, empty file so every child reads schema version 0 and then
  // queues for the lock: when it is released they migrate one after another, each having read a
  // version that the one before it has since moved on.
  const holder = new Database(file);
  holder.exec('BEGIN IMMEDIATE');
  const child = fileURLToPath(new URL('./open-store-child.ts', import.meta.url));
  const children = [0, 1, 2].map(() => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, file], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const ready = new Promise<void>((resolveReady) => {
      p.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('ready\n')) resolveReady();
      });
    });
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const closed = new Promise<void>((resolveClosed) => p.on('close', () => resolveClosed()));
    return { p, ready, closed, output: () => out, errors: () => err };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.p.stdin.write('go\n');
  await new Promise((r) => setTimeout(r, 1500));
  holder.exec('COMMIT');
  holder.close();
  await Promise.all(children.map((c) => c.closed));
  for (const c of children) {
    assert.equal(c.output().trim().split('\n').pop(), `version ${LATEST_SCHEMA_VERSION}`, c.output() + c.errors());
  }
});
