import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash } from '../../src/sim/calibration.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';

function setup(perTier: number): { dir: string; file: string; data: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sweep-'));
  const file = join(dir, 'bottles.json');
  writeFileSync(
    file,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier, seed: 5 })),
  );
  return { dir, file, data: join(dir, 'data') };
}

test('a sweep runs every layout R times on worker threads, stores each rollout and prints per-tier progress with intervals', async () => {
  const { dir, file, data } = setup(1);
  try {
    const r = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--repeats',
      '2',
      '--workers',
      '2',
      '--seconds',
      '0.5',
      '--data',
      data,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.rollouts, 4);
    assert.equal(out.stopped, false);
    assert.deepEqual(
      out.tiers.map((t: { tier: number | string }) => t.tier),
      [1, 2, 'all'],
    );
    for (const t of out.tiers)
      assert.ok(t.low <= t.meanProgress && t.meanProgress <= t.high, 'the estimate lies in its interval');
    assert.match(r.stderr, /4\/4 ▕█+▏ [\d.]+ rollouts\/s, ETA/);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({});
      assert.equal(rows.length, 4);
      assert.deepEqual(rows.map((x) => `${x.layoutIndex}/${x.repeatIndex}`).sort(), ['0/0', '0/1', '1/0', '1/1']);
      for (const row of rows) {
        assert.equal(row.kind, 'sim');
        assert.equal(row.status, 'valid');
        assert.equal(row.progress, 0);
        assert.match(row.finalStateHash ?? '', /^[0-9a-f]{64}$/);
        assert.equal(row.calibrationSha256s.length, 1);
      }
      // The two repeats of a layout differ (seeded placement noise) but each is reproducible.
      const l0 = rows.filter((x) => x.layoutIndex === 0);
      assert.notEqual(l0[0].finalStateHash, l0[1].finalStateHash);
    } finally {
      store.close();
    }
    // Reproducible: the same sweep again, on one worker instead of two (so in another order, on
    // other threads), ends every (layout, repeat) in the same final state, bit for bit.
    const again = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--repeats',
      '2',
      '--workers',
      '1',
      '--seconds',
      '0.5',
      '--data',
      data,
      '--json',
    ]);
    assert.equal(again.code, 0, again.stderr);
    const second = openStore(join(data, 'tandem.sqlite'));
    try {
      const bySession = new Map<number, Map<string, string | null>>();
      for (const x of second.listRollouts({})) {
        const m = bySession.get(x.sessionId!) ?? new Map<string, string | null>();
        m.set(`${x.layoutIndex}/${x.repeatIndex}`, x.finalStateHash);
        bySession.set(x.sessionId!, m);
      }
      const [a, b] = [...bySession.values()];
      assert.equal(bySession.size, 2, 'two sessions');
      assert.equal(a.size, 4);
      assert.deepEqual(
        Object.fromEntries([...b].sort()),
        Object.fromEntries([...a].sort()),
        'each (layout, repeat) ends in the same final state',
      );
    } finally {
      second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sweep of a policy answering NaN stores each rollout as a policy error: valid, scored as it stood, counted per tier', async () => {
  const { dir, file, data } = setup(1);
  try {
    const model = join(dir, 'nan.onnx');
    writeFileSync(model, buildLinearPolicyModel({ horizon: 10, cameras: [], nanBias: true }).bytes);
    const r = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      `onnx:${model}`,
      '--seconds',
      '0.3',
      '--data',
      data,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual([out.rollouts, out.policyErrors, out.invalid, out.aborted], [2, 2, 0, 0]);
    assert.deepEqual(
      out.tiers.map((t: { tier: number | string; rollouts: number; policyErrors: number }) => [
        t.tier,
        t.rollouts,
        t.policyErrors,
      ]),
      [
        [1, 1, 1],
        [2, 1, 1],
        ['all', 2, 2],
      ],
    );
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      for (const row of store.listRollouts({})) {
        assert.deepEqual([row.status, row.outcome, row.statusReason], ['valid', 'policy-error', null]);
        assert.match(row.policyError ?? '', /answered NaN at action row 0, entry 5.*at step 0 of 15/);
        assert.equal(typeof row.progress, 'number', 'scored');
      }
    } finally {
      store.close();
    }
    const text = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      `onnx:${model}`,
      '--seconds',
      '0.3',
      '--data',
      data,
    ]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /policy errors {2}invalid {2}aborted/);
    assert.match(text.stdout, /\nall +2 +2 +[\d.]+ +\[[\d.]+, [\d.]+\] +2 +0 +0 +\d+\n/);
    assert.match(text.stdout, /policy error \(scored as it stood\): Policy onnx:nan\.onnx answered NaN/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Ctrl-C stops a sweep cleanly and keeps the rollouts that finished', async () => {
  const { dir, file, data } = setup(3);
  try {
    const bin = BIN;
    const child = spawn(
      process.execPath,
      [
        bin,
        'sim',
        'sweep',
        '--layouts',
        file,
        '--policy',
        'code:hold',
        '--repeats',
        '4',
        '--workers',
        '1',
        '--seconds',
        '0.5',
        '--data',
        data,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const code = await new Promise<number | null>((resolve) => {
      let sent = false;
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        // Interrupt once at least two rollouts have finished (the bar may skip counts).
        const done = [...stderr.matchAll(/(\d+)\/24\b/g)].map((m) => Number(m[1]));
        if (!sent && done.some((n) => n >= 2)) {
          sent = true;
          child.kill('SIGINT');
        }
      });
      child.on('close', (c) => resolve(c));
    });
    assert.equal(code, 130, stderr);
    assert.match(stderr, /Stopping after the work in flight/);
    const m = /^Stopped: (\d+) of 24 rollouts/m.exec(stdout);
    assert.ok(m, stdout);
    const kept = Number(m[1]);
    assert.ok(kept >= 2 && kept < 24, `kept ${kept}`);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({});
      assert.equal(rows.length, kept, 'every finished rollout is stored, nothing else');
      assert.ok(rows.every((x) => x.status === 'valid'));
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sweep with an unknown policy spec says so in one sentence and stores nothing', async () => {
  const { dir, file, data } = setup(1);
  try {
    const r = await runTandem(['sim', 'sweep', '--layouts', file, '--policy', 'onnx', '--data', data]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^Unknown policy 'onnx'; known policies: code:hold, .*ws:\/\/host:port\.\n$/);
    assert.equal(r.stdout, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sweep with --calibration runs on that record and stores its hash and its JSON with every rollout; a bad file stores nothing', async () => {
  const { dir, file, data } = setup(1);
  try {
    const edited = {
      ...JSON.parse((await runTandem(['sim', 'calibration'])).stdout),
      name: 'stickier-table',
      tableFriction: 0.9,
    };
    const cal = join(dir, 'sim-calibration.json');
    writeFileSync(cal, JSON.stringify(edited));
    const r = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--workers',
      '1',
      '--seconds',
      '0.3',
      '--calibration',
      cal,
      '--data',
      data,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const hash = simCalibrationHash(edited);
    assert.equal(out.simCalibration, hash);
    assert.notEqual(hash, simCalibrationHash(DEFAULT_SIM_CALIBRATION));
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({});
      assert.equal(rows.length, 2);
      for (const row of rows) assert.deepEqual(row.calibrationSha256s, [hash]);
      const stored = store.getCalibration(hash);
      assert.equal(stored?.kind, 'sim-parameters');
      assert.deepEqual(JSON.parse(stored.canonicalJson), edited, 'the store keeps the record itself, not only its id');
    } finally {
      store.close();
    }

    const typo = join(dir, 'typo.json');
    writeFileSync(typo, JSON.stringify({ ...edited, tableFricton: 0.9 }));
    const other = join(dir, 'other-data');
    const bad = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--calibration',
      typo,
      '--data',
      other,
    ]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^The sim calibration file .*typo\.json: unknown field 'tableFricton' .*\.\n$/);
    assert.equal(existsSync(join(other, 'tandem.sqlite')), false, 'nothing was stored');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
