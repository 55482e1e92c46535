import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { PlcEmulator } from '../../drivers/cell-io/plc-emulator.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';

// A session with the cell's I/O: the door is open when the session starts, so the first rollout
// waits (the session says why, journalled as a pause); closing the door lets it run, the tower
// light shows the rollout running, and the session ends with every rollout scored.

test('session run --cell-io: an open door holds the session before the arms move, closing it lets the session run to its end', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-session-cell-io-'));
  const plc = await PlcEmulator.start({ pkiDir: join(dir, 'pki'), heartbeatMs: 50 });
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })),
    );
    const cell = join(dir, 'cell.json');
    writeFileSync(cell, JSON.stringify({ type: 'yam-cell', gap: 'seed:5', replyDeadlineMs: 350 }));
    const cellIo = join(dir, 'cell-io.json');
    writeFileSync(cellIo, JSON.stringify({ ...plc.config(), staleAfterMs: 400 }));
    const plan = join(dir, 'plan.json');
    const p = await runTandem([
      'session',
      'plan',
      '--layouts',
      layouts,
      '--policies',
      'code:hold',
      '--per-layout',
      '1',
      '--seconds',
      '1',
      '-o',
      plan,
    ]);
    assert.equal(p.code, 0, p.stderr);
    plc.setInput('doorClosed', false);
    const data = join(dir, 'data');
    const child = spawn(
      process.execPath,
      [
        join(PROJECT_ROOT, 'bin/tandem.js'),
        'session',
        'run',
        '--plan',
        plan,
        '--rig-config',
        cell,
        '--scripted-operator',
        '--cell-io',
        cellIo,
        '--data',
        data,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number>((res) => child.on('close', (code) => res(code ?? -1)));
    let amber = false;
    const watch = setInterval(() => {
      if (plc.towerLight().towerAmber) amber = true;
    }, 10);
    try {
      await until(() => /The cell is not safe to run: .*door/i.test(stderr) || child.exitCode !== null, 120_000, 20);
      assert.match(stderr, /The cell is not safe to run: .*door/i, stderr);
      assert.doesNotMatch(stderr, /Running code:hold/, 'no rollout starts while the door is open');
      plc.setInput('doorClosed', true);
      const code = await exited;
      assert.equal(code, 0, stdout + stderr);
      assert.match(stdout, /Session 1 ended: 1 of 1 rollouts done \(1 scored\)/);
      assert.ok(amber, 'the tower light showed the rollout running');
    } finally {
      clearInterval(watch);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const actions = store.listSessionJournal(1).map((e) => e.action);
      assert.ok(
        actions.indexOf('paused') >= 0 && actions.indexOf('paused') < actions.indexOf('running'),
        actions.join(', '),
      );
    } finally {
      store.close();
    }
  } finally {
    await plc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
