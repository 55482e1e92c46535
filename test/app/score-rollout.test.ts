// `tandem score --rollout ID`: the operator's score of one stored rig rollout, kept in the store —
// one score per rollout, a re-score only with a reason (the earlier one kept).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, runInProcess } from '../helpers/cli.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import { openStationStore } from '../../src/app/station-store.js';
import { startStation } from '../helpers/station-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-score-rollout-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const set = JSON.parse(
  readFileSync(join(PROJECT_ROOT, 'test/fixtures/layouts/bottles-golden.json'), 'utf8'),
) as LayoutSet;
const data = join(dir, 'data');

function seed(data: string): { valid: number; invalid: number; sim: number; inSession: number } {
  const store = openStationStore(data);
  try {
    store.putLayoutSet(set);
    const policy = store.upsertPolicy({ spec: 'onnx:/lab/pi.onnx', name: 'onnx:pi.onnx', checkpointSha256: null });
    const base = {
      policyId: policy.id,
      layoutSetSha256: set.sha256,
      layoutIndex: 2,
      episodeSeconds: 20,
      controlHz: 50,
    } as const;
    const session = store.createSession({ kind: 'real-eval' });
    return {
      valid: store.insertRollout({ ...base, kind: 'real', status: 'valid' }),
      invalid: store.insertRollout({
        ...base,
        kind: 'real',
        status: 'invalid',
        outcome: 'cameras-failed',
        statusReason: 'The cameras failed at 1.20 s into the episode.',
      }),
      sim: store.insertRollout({ ...base, kind: 'sim', status: 'valid', progress: 0.5 }),
      inSession: store.insertRollout({ ...base, kind: 'real', status: 'valid', sessionId: session.id }),
    };
  } finally {
    store.close();
  }
}

test("a rig rollout is scored once from an end-state file; again only with a reason; never when invalid, sim or a session's", async () => {
  const ids = seed(data);
  const layout = set.layouts[2];
  const n = layout.objects.length;
  const ends = join(dir, 'ends.json');
  writeFileSync(
    ends,
    JSON.stringify(layout.objects.map((o, i) => (i === 0 ? { id: o.id } : { id: o.id, region: 'bin' }))),
  );
  const score = (id: number, extra: string[] = []) =>
    runInProcess(
      ['score', '--rollout', String(id), '--end-state', ends, '--data', data, '--operator', 'ana', ...extra],
      dir,
    );

  const first = await score(ids.valid, ['--json']);
  assert.equal(first.code, 0, first.stderr);
  const j = JSON.parse(first.stdout);
  assert.equal(j.progress, (n - 1) / n);
  assert.equal(j.rescored, false);
  assert.equal(j.layout, 2);

  const again = await score(ids.valid);
  assert.equal(again.code, 2);
  assert.match(
    again.stderr,
    new RegExp(
      `^Rollout ${ids.valid} was scored ${((n - 1) / n).toFixed(2)} already \\(.* by ana\\); to score it again, say why with --reason "…" \\(the earlier score is kept\\)\\.\\n$`,
    ),
  );

  writeFileSync(ends, JSON.stringify(layout.objects.map((o) => ({ id: o.id, region: 'bin' }))));
  const rescored = await score(ids.valid, ['--reason', 'the last bottle was in the bin, hidden by the gripper']);
  assert.equal(rescored.code, 0, rescored.stderr);
  assert.match(
    rescored.stdout,
    new RegExp(`^Rollout ${ids.valid} \\(bottles-in-the-bin layout 2, tier 5\\) re-scored 1\\.000: `),
  );

  for (const [id, re] of [
    [
      ids.invalid,
      new RegExp(
        `^Rollout ${ids.invalid} is invalid \\(The cameras failed at 1\\.20 s into the episode\\); invalid and aborted rollouts are never scored\\.\\n$`,
      ),
    ],
    [ids.sim, /ran in the sim, which scores it from its own end state/],
    [ids.inSession, /belongs to session \d+, whose journal keeps its scores/],
    [999, /^There is no rollout 999 in the store/],
  ] as const) {
    const r = await score(id);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, re);
  }

  const store = openStationStore(data);
  try {
    const scores = store.listOperatorScores(ids.valid);
    assert.deepEqual(
      scores.map((s) => [s.progress, s.operator, s.note]),
      [
        [(n - 1) / n, 'ana', null],
        [1, 'ana', 'the last bottle was in the bin, hidden by the gripper'],
      ],
    );
    assert.equal(store.getRollout(ids.valid)!.effectiveProgress, 1, 'the latest score is in force');
    for (const id of [ids.invalid, ids.sim, ids.inSession]) assert.equal(store.listOperatorScores(id).length, 0);
  } finally {
    store.close();
  }
});

test('the Rollouts page scores a single rig rollout through the API: a count, a re-score only with a reason', async () => {
  const station = await startStation({ rigConfig: { type: 'mirror' } });
  try {
    const ids = seed(station.dataDir);
    const n = set.layouts[2].objects.length;
    const post = async (path: string, body: unknown): Promise<{ status: number; data: Record<string, unknown> }> => {
      const res = await fetch(`${station.base}${path}`, {
        method: 'POST',
        headers: { 'X-Tandem-Token': station.token, 'Content-Type': 'application/json', Origin: station.base },
        body: JSON.stringify(body),
      });
      return { status: res.status, data: (await res.json()) as Record<string, unknown> };
    };
    const first = await post(`/api/rollouts/${ids.valid}/score`, { count: n - 1, operator: 'ana' });
    assert.equal(first.status, 201, JSON.stringify(first.data));
    assert.equal(first.data.progress, (n - 1) / n);
    const again = await post(`/api/rollouts/${ids.valid}/score`, { count: n });
    assert.equal(again.status, 409);
    assert.match(
      String(again.data.error),
      new RegExp(
        `^Rollout ${ids.valid} was scored .* already .*; to score it again, say why with a reason \\(the earlier score is kept\\)\\.$`,
      ),
    );
    const rescored = await post(`/api/rollouts/${ids.valid}/score`, { count: n, reason: 'miscounted' });
    assert.equal(rescored.status, 201, JSON.stringify(rescored.data));
    assert.equal(rescored.data.rescored, true);
    const detail = await station.api<{ progress: number; rehearsal: boolean; sessionId: number | null }>(
      `/api/rollouts/${ids.valid}`,
    );
    assert.deepEqual([detail.progress, detail.rehearsal, detail.sessionId], [1, false, null]);
    assert.equal((await post(`/api/rollouts/${ids.invalid}/score`, { count: 1 })).status, 409);
    assert.equal((await post(`/api/rollouts/999/score`, { count: 1 })).status, 404);
    const both = await post(`/api/rollouts/${ids.valid}/score`, { count: 1, endStates: [] });
    assert.equal(both.status, 400);
    assert.match(String(both.data.error), /either 'endStates' \(each object\) or 'count'/);
  } finally {
    await station.dispose();
  }
});
