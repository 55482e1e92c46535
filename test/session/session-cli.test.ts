import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { startFakeOpenpiServer } from '../policy/openpi-fakes.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { createRng } from '../../src/layouts/random.js';
import { openStore } from '../../src/store/store.js';
import { SCRIPTED_OPERATOR } from '../../src/app/session-operators.js';

/**
 * Two tier-1 layouts (one bottle each) and two camera-less policies that answer fast on a busy
 * machine: holding still, and a seeded linear ONNX model. The emulated cell on virtual time
 * (`clock: 'virtual'`), with the driver's production reply deadline.
 */
function fixture(): { dir: string; layouts: string; data: string; cell: string; specs: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-session-'));
  const layouts = join(dir, 'bottles.json');
  writeFileSync(
    layouts,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 11 })),
  );
  const model = join(dir, 'policy.onnx');
  writeFileSync(model, buildLinearPolicyModel({ horizon: 10, seed: 3, cameras: [] }).bytes);
  const cell = join(dir, 'cell.json');
  writeFileSync(cell, JSON.stringify({ type: 'yam-cell', gap: 'seed:5', clock: 'virtual' }));
  return { dir, layouts, data: join(dir, 'data'), cell, specs: ['code:hold', `onnx:${model}`] };
}

async function planFile(f: ReturnType<typeof fixture>, extra: string[], seconds = '1'): Promise<string> {
  const out = join(f.dir, `plan-${Math.random().toString(36).slice(2)}.json`);
  const r = await runTandem([
    'session',
    'plan',
    '--layouts',
    f.layouts,
    '--policies',
    f.specs.join(','),
    '--per-layout',
    '1',
    '--seconds',
    seconds,
    '--seed',
    '5',
    '-o',
    out,
    ...extra,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return out;
}

interface ExportedAttempt {
  attempt: number;
  rolloutId: number | null;
  status: string | null;
  reason: string | null;
  interrupted: boolean;
  recoveredFiles: string[];
  finalMode: string | null;
  episodeFile: string | null;
  episodeFileExists: boolean;
  recording: { state: string; file: string; recoveredFile: string | null } | null;
  score: { progress: number; counts: Record<string, number>; endStates: unknown[]; operator: string } | null;
}
interface Exported {
  session: { endedAt: string | null };
  plan: { policies: { label: string; spec?: string }[]; rollouts: unknown[] };
  blindKey: Record<string, string> | null;
  progress: { total: number; done: number; scored: number; operatorS: number; ended: boolean };
  operatorHours: number;
  rollouts: {
    slot: number;
    policy: string;
    spec?: string;
    outcome: string | null;
    scores: number;
    operatorS: { place: number; score: number; reset: number };
    attempts: ExportedAttempt[];
  }[];
}

async function exported(f: { data: string }, id = 1): Promise<Exported> {
  const r = await runTandem(['session', 'export', String(id), '--json', '--data', f.data]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Exported;
}

/** Every planned rollout scored exactly once, by one stored score on a rollout whose episode file exists. */
function assertScoredOnce(x: Exported): void {
  assert.equal(x.rollouts.length, x.plan.rollouts.length);
  for (const r of x.rollouts) {
    assert.equal(r.outcome, 'scored', `slot ${r.slot}: ${JSON.stringify(r.attempts)}`);
    assert.equal(r.scores, 1, `slot ${r.slot} scored once`);
    const scored = r.attempts.filter((a) => a.score !== null);
    assert.equal(scored.length, 1);
    assert.equal(scored[0].status, 'valid');
    assert.equal(scored[0].score!.operator, SCRIPTED_OPERATOR);
    assert.ok(scored[0].episodeFileExists, `slot ${r.slot}'s episode file ${scored[0].episodeFile} exists`);
    assert.equal(scored[0].recording?.state, 'finished');
    assert.ok(
      r.operatorS.place > 0 && r.operatorS.score > 0 && r.operatorS.reset > 0,
      'operator seconds per rollout are recorded',
    );
  }
  assert.equal(x.progress.scored, x.plan.rollouts.length);
  assert.ok(x.operatorHours > 0);
}

test('a blind two-policy session runs headless on the emulated cell with the scripted operator; export shows every planned rollout scored once with its recording, the key only once it ended', async () => {
  const f = fixture();
  try {
    const plan = await planFile(f, ['--blind']);
    // With the projector: footprints of each layout before placing, black before every rollout.
    const calib = join(f.dir, 'projector.json');
    const c = await runTandem([
      'projector',
      'calibrate',
      '--points',
      join(PROJECT_ROOT, 'test/fixtures/projector/points.json'),
      '-o',
      calib,
    ]);
    assert.equal(c.code, 0, c.stderr);
    const frames = join(f.dir, 'frames');
    const r = await runTandem([
      'session',
      'run',
      '--plan',
      plan,
      '--rig-config',
      f.cell,
      '--scripted-operator',
      '--data',
      f.data,
      '--projector-calibration',
      calib,
      '--projector-out',
      frames,
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^Session 1 ended: 4 of 4 rollouts done \(4 scored\)/);
    assert.match(r.stderr, /Projecting with the projector to .*frames \(calibration [0-9a-f]{12}/);
    const shown = readdirSync(frames).sort();
    const kinds = shown.map((name) => /-(layout-\d+|blank)\.png$/.exec(name)?.[1]);
    assert.ok(kinds.length >= 8 && kinds.length % 2 === 0, shown.join(' '));
    kinds.forEach((k, i) =>
      assert.equal(
        k === 'blank',
        i % 2 === 1,
        `frame ${i}: layout, then blank, for every attempt (${kinds.join(' ')})`,
      ),
    );
    // Blind: what the operator read names letters, never the policies.
    assert.match(r.stderr, /Rollout \d+: policy A runs for [\d.]+ s — rig: emulated cell \(no hardware\)\./);
    assert.match(r.stderr, /Rollout \d+: policy B runs for [\d.]+ s — rig: emulated cell \(no hardware\)\./);
    // (onnxruntime's own warnings name itself, not the policy.)
    assert.doesNotMatch(r.stderr + r.stdout, /code:hold|onnx:|policy\.onnx/);
    const x = await exported(f);
    assertScoredOnce(x);
    assert.ok(x.session.endedAt !== null && x.progress.ended);
    assert.deepEqual(Object.keys(x.blindKey!).sort(), ['policy A', 'policy B']);
    assert.deepEqual(Object.values(x.blindKey!).sort(), [...f.specs].sort());
    // Each scored rollout is a real rollout of the session in the store, with its one score.
    const store = openStore(join(f.data, 'tandem.sqlite'));
    try {
      // Rollouts the rig faulted on are kept too, unscored, beside their redo.
      const rows = store.listRollouts({ sessionId: 1 });
      const scores = rows.map((row) => store.listOperatorScores(row.id).length);
      assert.equal(
        scores.reduce((a, b) => a + b, 0),
        4,
      );
      assert.equal(
        store.getCalibration(JSON.parse(readFileSync(calib, 'utf8')).sha256)?.kind,
        'projector',
        'the projector calibration the session used is stored',
      );
      assert.ok(scores.every((n) => n <= 1));
      assert.ok(
        rows.filter((row) => store.listOperatorScores(row.id).length === 0).every((row) => row.status !== 'valid'),
        'every valid rollout is scored',
      );
      const bySpec = new Map(rows.map((row) => [row.id, store.getPolicy(row.policyId)!.spec]));
      for (const s of x.rollouts) {
        for (const a of s.attempts)
          assert.equal(bySpec.get(a.rolloutId!), x.blindKey![s.policy], 'the label ran the policy the key says');
      }
    } finally {
      store.close();
    }
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('while a blind session runs, export hides which label is which policy', async () => {
  const f = fixture();
  try {
    const plan = await planFile(f, ['--blind']);
    // The operator stops for now at the first placement (s): the session stays open.
    const r = await runTandem(['session', 'run', '--plan', plan, '--rig-config', f.cell, '--data', f.data], {
      input: 's\n',
    });
    assert.equal(r.code, 4, r.stderr);
    assert.match(
      r.stdout,
      /^Session 1 stopped \(stopped by the operator\): 0 of 4 rollouts done.*Carry on with: tandem session resume 1\n$/,
    );
    const x = await exported(f);
    assert.equal(x.blindKey, null);
    assert.ok(x.plan.policies.every((p) => p.spec === undefined));
    assert.ok(x.rollouts.every((s) => s.spec === undefined));
    assert.doesNotMatch(JSON.stringify(x), /code:hold|onnx:/);
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test("a blind session's episode files are named by session, slot and attempt, never by policy, so a path shown or exported mid-session unblinds nothing", async () => {
  const f = fixture();
  try {
    const plan = await planFile(f, ['--blind']);
    // Placed (Enter), the first rollout runs; the operator leaves at its score (end of input): the session stops for now.
    const r = await runTandem(['session', 'run', '--plan', plan, '--rig-config', f.cell, '--data', f.data], {
      input: '\n',
    });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    const x = await exported(f);
    const files = x.rollouts
      .flatMap((s) => s.attempts.map((a) => a.episodeFile))
      .filter((p): p is string => p !== null);
    assert.ok(files.length >= 1, `a rollout was recorded: ${JSON.stringify(x.rollouts[0])}`);
    for (const file of files) {
      assert.match(file, /-L\d+-session1-slot\d+-attempt\d+\.mcap$/);
      assert.doesNotMatch(file, /hold|policy/, 'no policy name in the file name');
    }
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

/** Spawns `tandem ARGS` and collects its stderr; resolves with its exit. */
function spawnTandem(args: string[]): {
  child: ChildProcess;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/tandem.js'), ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { child, err: () => err, exited };
}

function journal(data: string): { slot: number | null; attempt: number | null; action: string }[] {
  const db = new Database(join(data, 'tandem.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT slot, attempt, action FROM session_journal ORDER BY id').all() as {
      slot: number | null;
      attempt: number | null;
      action: string;
    }[];
  } finally {
    db.close();
  }
}

test('SIGKILL inside an episode and between two actions: session resume finishes it with nothing lost or scored twice, the cut-off recording recovered', async () => {
  const f = fixture();
  // Seeded "random" moments: which rollout's episode is cut, and how far into it.
  const rng = createRng(Number(process.env.TANDEM_SESSION_KILL_SEED ?? 2026));
  const cutRollout = rng.int(1, 3);
  const cutAfterMs = rng.int(300, 1200);
  try {
    const plan = await planFile(f, ['--blind'], '3');
    const runArgs = ['--rig-config', f.cell, '--scripted-operator', '--data', f.data];
    // 1. Killed during rollout `cutRollout`'s episode. On paced virtual time: a 3 s episode lasts at
    // least 3 s of wall time, so a kill 0.3–1.2 s into it lands inside it however fast the machine
    // is (unpaced, it may already be over). The same cell, so the resumes below run unpaced.
    const paced = join(f.dir, 'cell-paced.json');
    writeFileSync(paced, JSON.stringify({ type: 'yam-cell', gap: 'seed:5', clock: 'paced' }));
    const first = spawnTandem([
      'session',
      'run',
      '--plan',
      plan,
      '--rig-config',
      paced,
      '--scripted-operator',
      '--data',
      f.data,
    ]);
    await until(() => first.err().includes(`Rollout ${cutRollout}: `), 240_000);
    await new Promise((r) => setTimeout(r, cutAfterMs));
    first.child.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    const cut = journal(f.data).at(-1)!;
    assert.deepEqual(
      [cut.slot, cut.action],
      [cutRollout - 1, 'running'],
      `killed inside rollout ${cutRollout}'s episode`,
    );
    const scoredBefore = journal(f.data).filter((e) => e.action === 'scored').length;

    // 2. Resumed, then killed right after a score is committed (between two operator actions).
    const second = spawnTandem(['session', 'resume', '1', ...runArgs]);
    await until(() => journal(f.data).filter((e) => e.action === 'scored').length > scoredBefore, 240_000, 20);
    second.child.kill('SIGKILL');
    await second.exited;
    assert.match(
      second.err(),
      new RegExp(`Rollout ${cutRollout} was cut off when the station stopped; its recording was recovered`),
    );
    const afterKill = journal(f.data);
    const lastScore = afterKill.filter((e) => e.action === 'scored').at(-1)!;

    // 3. Resumed to the end.
    const third = await runTandem(['session', 'resume', '1', ...runArgs]);
    assert.equal(third.code, 0, third.stdout + third.stderr);
    const all = journal(f.data);
    // Where the last committed action left it: a scored slot carries on at its reset, never re-scored.
    const resumedAt = all.findIndex((e, i) => i >= afterKill.length && e.action === 'session-resumed');
    const next = all.slice(resumedAt + 1).find((e) => e.slot !== null)!;
    if (afterKill.at(-1)!.action === 'scored') assert.deepEqual([next.slot, next.action], [lastScore.slot, 'reset']);

    const x = await exported(f);
    assertScoredOnce(x);
    assert.match(third.stdout, /^Session 1 ended: 4 of 4 rollouts done \(4 scored\)/);
    const cutSlot = x.rollouts[cutRollout - 1];
    const interrupted = cutSlot.attempts.find((a) => a.interrupted)!;
    assert.ok(interrupted, 'the cut-off attempt is kept, marked interrupted');
    assert.equal(interrupted.status, 'interrupted');
    assert.equal(interrupted.score, null);
    assert.equal(interrupted.recoveredFiles.length, 1);
    assert.ok(existsSync(interrupted.recoveredFiles[0]), 'the export names the recovered episode file, which exists');
    assert.ok(cutSlot.attempts.at(-1)!.attempt > interrupted.attempt, 'and redone');
    const store = openStore(join(f.data, 'tandem.sqlite'));
    try {
      const recovered = store.listRecordings({ states: ['recovered'] });
      assert.equal(recovered.length, 1, 'the cut-off episode file is recovered');
      assert.ok(existsSync(recovered[0].recoveredFile!));
      assert.equal(store.listRecordings({ states: ['recording'] }).length, 0, 'no file is left unfinished');
      const scores = store.listRollouts({ sessionId: 1 }).map((row) => store.listOperatorScores(row.id).length);
      assert.equal(
        scores.reduce((a, b) => a + b, 0),
        4,
        'four scores, none twice',
      );
      assert.ok(scores.every((n) => n <= 1));
    } finally {
      store.close();
    }
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('a layout set whose hash does not match the plan is refused in one sentence before the rig moves; a hand-edited plan too', async () => {
  const f = fixture();
  try {
    const plan = await planFile(f, []);
    const other = join(f.dir, 'other.json');
    const otherSet = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 12 });
    writeFileSync(other, serializeLayoutSet(otherSet));
    const r = await runTandem([
      'session',
      'run',
      '--plan',
      plan,
      '--layouts',
      other,
      '--rig-config',
      f.cell,
      '--scripted-operator',
      '--data',
      f.data,
    ]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      new RegExp(
        `^The layout set ${other.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(${otherSet.sha256.slice(0, 12)}, version 1\\) is not the one this plan was made for \\([0-9a-f]{12}, version 1\\); give the plan's own layout set, or plan again with this one\\.\\n$`,
      ),
    );
    // The plan's own file replaced by another set (and no copy in a fresh store): the same refusal.
    writeFileSync(f.layouts, serializeLayoutSet(otherSet));
    const moved = await runTandem([
      'session',
      'run',
      '--plan',
      plan,
      '--rig-config',
      f.cell,
      '--scripted-operator',
      '--data',
      join(f.dir, 'fresh'),
    ]);
    assert.equal(moved.code, 2);
    assert.match(moved.stderr, /is not the one this plan was made for/);
    const edited = join(f.dir, 'edited.json');
    writeFileSync(edited, readFileSync(plan, 'utf8').replace('"perLayout": 1', '"perLayout": 2'));
    const e = await runTandem(['session', 'run', '--plan', edited, '--data', f.data]);
    assert.equal(e.code, 2);
    assert.match(e.stderr, /edited\.json was changed after it was written/);
    const store = openStore(join(f.data, 'tandem.sqlite'));
    try {
      assert.equal(store.listSessions().length, 0, 'no session was started');
    } finally {
      store.close();
    }
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('a policy server that hangs mid-session: its rollout is marked failed with the reason, the arms end damped, the session carries on and ends intact', async () => {
  const f = fixture();
  const server = await startFakeOpenpiServer('hang');
  try {
    const out = join(f.dir, 'hang.json');
    const layouts = join(f.dir, 'one.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })),
    );
    const p = await runTandem([
      'session',
      'plan',
      '--layouts',
      layouts,
      '--policies',
      `code:hold,${server.url}`,
      '--per-layout',
      '1',
      '--seconds',
      '1',
      '-o',
      out,
    ]);
    assert.equal(p.code, 0, p.stderr);
    const r = await runTandem([
      'session',
      'run',
      '--plan',
      out,
      '--rig-config',
      f.cell,
      '--scripted-operator',
      '--blank-cameras',
      '--timeout-ms',
      '800',
      '--data',
      f.data,
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^Session 1 ended: 2 of 2 rollouts done \(1 scored, 1 closed unscored\)/);
    const x = await exported(f);
    const hung = x.rollouts.find((s) => s.policy === server.url)!;
    assert.equal(hung.outcome, 'closed');
    assert.equal(hung.scores, 0);
    assert.equal(hung.attempts.length, 1, 'a policy failure is its result: not redone');
    assert.equal(hung.attempts[0].status, 'aborted');
    assert.match(hung.attempts[0].reason!, /did not answer within 800 ms/);
    assert.equal(hung.attempts[0].finalMode, 'damped');
    assert.ok(hung.attempts[0].episodeFileExists, 'the failed rollout is recorded too');
    const held = x.rollouts.find((s) => s.policy === 'code:hold')!;
    assert.equal(held.outcome, 'scored');
    assert.equal(held.scores, 1);
  } finally {
    await server.close();
    rmSync(f.dir, { recursive: true, force: true });
  }
});
