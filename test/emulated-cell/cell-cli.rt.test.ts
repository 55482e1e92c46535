import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';
import { EMULATED_CELL_KIND } from '../../src/emulated-cell/cell-truth.js';
import { SCRIPTED_OPERATOR } from '../../src/app/session-operators.js';

function fixture(): { dir: string; layouts: string; cellConfig: string; motorsConfig: string; data: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cell-cli-'));
  const layouts = join(dir, 'bottles.json');
  writeFileSync(
    layouts,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 11 })),
  );
  // The cell with the longest reply deadline the driver accepts: shared test cores.
  const cellConfig = join(dir, 'cell.json');
  writeFileSync(cellConfig, JSON.stringify({ type: 'yam-cell', gap: 'seed:5', replyDeadlineMs: 350 }));
  const motorsConfig = join(dir, 'motors.json');
  writeFileSync(motorsConfig, JSON.stringify({ type: 'yam-emulated', replyDeadlineMs: 350 }));
  return { dir, layouts, cellConfig, motorsConfig, data: join(dir, 'data') };
}

test('rig rollout on the emulated cell: the scripted operator scores the end state, stored as an operator score on a real rollout marked as the cell', async () => {
  const f = fixture();
  try {
    const r = await runTandem([
      'rig',
      'rollout',
      '--policy',
      'code:hold',
      '--layouts',
      f.layouts,
      '--layout',
      '1',
      '--seconds',
      '1',
      '--rig-config',
      f.cellConfig,
      '--data',
      f.data,
      '--score-from-cell',
      '--json',
    ]);
    assert.equal(r.code, 0, `${r.stderr}${r.stdout}`);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'valid');
    assert.equal(j.rig, 'yam-cell');
    assert.equal(j.scoring, `scored by the ${SCRIPTED_OPERATOR}`);
    assert.equal(j.progress, 0, 'holding still puts no bottle in the bin');
    assert.equal(j.endStates.length, 1);
    const store = openStore(join(f.data, 'tandem.sqlite'));
    try {
      const [row] = store.listRollouts({ kind: 'real' });
      assert.equal(row.id, j.rolloutId);
      assert.equal(row.layoutIndex, 1);
      assert.equal(row.latestScore?.operator, SCRIPTED_OPERATOR);
      assert.equal(row.effectiveProgress, 0);
      assert.equal(row.calibrationSha256s.length, 1);
      const marker = store.getCalibration(row.calibrationSha256s[0])!;
      assert.equal(marker.kind, EMULATED_CELL_KIND);
      assert.doesNotMatch(marker.canonicalJson, /objectMassScale|seed/, 'the store never holds the cell truth');
    } finally {
      store.close();
    }
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('a code policy rehearses on the emulated cell (reading its object poses); --score-from-cell elsewhere is one sentence', async () => {
  const f = fixture();
  try {
    const r = await runTandem([
      'rig',
      'rollout',
      '--policy',
      'code:bottles-in-the-bin',
      '--layouts',
      f.layouts,
      '--layout',
      '0',
      '--seconds',
      '3',
      '--rig-config',
      f.cellConfig,
      '--data',
      f.data,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'valid', j.reason);
    assert.equal(j.scoring, 'awaiting operator score');
    // The scripted policy moved the arms toward its first bottle: its commands were not all the start pose.
    assert.ok(j.chunks >= 2);
    const bad = await runTandem([
      'rig',
      'rollout',
      '--policy',
      'code:hold',
      '--layouts',
      f.layouts,
      '--layout',
      '0',
      '--seconds',
      '1',
      '--rig-config',
      f.motorsConfig,
      '--data',
      f.data,
      '--score-from-cell',
    ]);
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr,
      "--score-from-cell needs the emulated cell (rig type yam-cell), not yam-emulated; on a real rig the operator scores with 'tandem score'.\n",
    );
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('tandem cell run serves both arms on ptys that tandem rig probe reads like hardware; it reports the table and stops cleanly on Ctrl-C', async () => {
  const f = fixture();
  const link = join(f.dir, 'cell');
  const child = spawn(
    process.execPath,
    [
      join(PROJECT_ROOT, 'bin/tandem.js'),
      'cell',
      'run',
      '--layouts',
      f.layouts,
      '--layout',
      '0',
      '--gap',
      'none',
      '--link',
      link,
    ],
    { cwd: PROJECT_ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  try {
    await until(() => /Ctrl-C to stop/.test(out) || child.exitCode !== null, 30_000);
    assert.match(out, /left arm +.*yam-left\n +right arm .*yam-right/, out + err);
    const probe = await runTandem([
      'rig',
      'probe',
      '--transport',
      'slcan',
      '--port',
      join(link, 'yam-right'),
      '--json',
    ]);
    assert.equal(probe.code, 0, probe.stderr);
    assert.equal(JSON.parse(probe.stdout).motors.length, 7);
    child.stdin.write('table\n');
    await until(() => out.includes(SCRIPTED_OPERATOR), 10_000);
    assert.match(out, /bottle-1: on the table/);
    child.stdin.write('right silent 3\n');
    await until(() => /motor 3 is silent/.test(out), 10_000);
    child.kill('SIGINT');
    assert.equal(await exited, 0, err);
    assert.match(out, /Stopped the cell after [\d.]+ s; the world used [\d.]+% of a core/);
    assert.ok(!existsSync(join(link, 'yam-left')) && !existsSync(join(link, 'yam-right')), 'the ptys are gone');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('the cell truth is refused without --reveal, and printed with it', async () => {
  const hidden = await runTandem(['cell', 'truth', '--gap', 'seed:3']);
  assert.equal(hidden.code, 2);
  assert.match(hidden.stderr, /^The cell truth is hidden from the station .* add --reveal /);
  assert.equal(hidden.stdout, '');
  const shown = await runTandem(['cell', 'truth', '--gap', 'seed:3', '--reveal', '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  const j = JSON.parse(shown.stdout);
  assert.match(j.sha256, /^[0-9a-f]{64}$/);
  assert.equal(j.truth.gap, 'seed:3');
  const bad = await runTandem(['cell', 'truth', '--reveal', '--gap', 'lots']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^The cell gap must be 'none'/);
});
