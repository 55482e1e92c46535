/**
 * The placement check before start, on the emulated cell: the scripted operator's hands put an
 * object 20 mm off its outline; the overhead camera's frame (the cell's own table, drawn from where
 * its camera really hangs) against the sim twin's picture of the layout catches it before anything
 * moves, names it, and the start waits until it is placed again. A correct placement passes; a
 * station without an overhead camera runs unchecked, journalled so. Real store file, real
 * Chromium renders, the session engine; the rollout itself is a stored row (no arms: the gate is
 * what is tested, and it runs before them).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { openStore, type Store } from '../../src/store/store.js';
import { buildSessionPlan } from '../../src/session/plan.js';
import { runSession, startSession } from '../../src/session/engine.js';
import type { SessionRolloutRunner } from '../../src/session/ports.js';
import { placementVerdict } from '../../src/session/placement-gate.js';
import { scriptedOperator } from '../../src/app/session-operators.js';
import { ScriptedHands, stationPlacementGate } from '../../src/app/placement-check.js';
import { ChromiumRenderer } from '../../src/sim/render/chromium-renderer.js';
import { cellPreset } from '../../src/app/station-config.js';

const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 1, seed: 11 });
const TASK = getTask(SET.task);
const renderer = new ChromiumRenderer();
after(() => renderer.close());

function rowRunner(store: Store): SessionRolloutRunner {
  return {
    run(r) {
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const id = store.insertRollout({
        kind: 'real',
        sessionId: r.sessionId,
        policyId: policy.id,
        layoutSetSha256: SET.sha256,
        layoutIndex: r.layout.index,
        episodeSeconds: r.episodeSeconds,
        controlHz: 50,
        status: 'valid',
        statusReason: null,
      });
      return Promise.resolve({
        rolloutId: id,
        status: 'valid',
        finalMode: 'damped',
        wallS: 0.01,
        tableEndStates: r.layout.objects.map((o) => ({ id: o.id })),
      });
    },
  };
}

async function session(
  station: ReturnType<typeof cellPreset>,
  errorMm: number,
): Promise<{ journal: { action: string; detail: Record<string, unknown> }[]; said: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-placement-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  try {
    const plan = buildSessionPlan({
      set: SET,
      specs: ['code:hold'],
      perLayout: 1,
      blind: false,
      seed: 3,
      episodeSeconds: 1,
      layouts: [0],
    });
    const id = startSession(store, plan, SET, 'scripted');
    const hands = new ScriptedHands(errorMm);
    const said: string[] = [];
    const placement = stationPlacementGate(station, { hands, renderer });
    const r = await runSession({
      store,
      sessionId: id,
      plan,
      set: SET,
      task: TASK,
      runner: rowRunner(store),
      operator: scriptedOperator((l) => said.push(l), hands),
      placement: placement.gate,
      signal: new AbortController().signal,
    });
    assert.equal(r.ended, true);
    return {
      journal: store
        .listSessionJournal(id)
        .map((e) => ({ action: e.action, detail: e.detail as Record<string, unknown> })),
      said,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const actions = (j: { action: string }[]): string[] =>
  j.map((e) => e.action).filter((a) => ['shown', 'placement-checked', 'placed', 'running', 'ran'].includes(a));

test('an object placed 20 mm off is caught and named before start; placed again, the rollout starts and keeps the measured errors', async () => {
  const first = SET.layouts[0].objects[0].id;
  const { journal, said } = await session(cellPreset(), 20);
  assert.deepEqual(actions(journal), [
    'shown',
    'placement-checked',
    'shown',
    'placement-checked',
    'placed',
    'running',
    'ran',
  ]);
  const [refused, passed] = journal.filter((e) => e.action === 'placement-checked').map((e) => e.detail);
  assert.equal(refused.pass, false);
  assert.equal(refused.object, first);
  const off = (refused.objects as { id: string; errorMm: number }[]).find((o) => o.id === first)!;
  assert.ok(off.errorMm > 14 && off.errorMm < 26, `measured ${off.errorMm} mm for 20 mm`);
  assert.ok(
    said.some(
      (l) =>
        l.startsWith(`${first} is `) &&
        /mm from where the layout puts it \(limit 10 mm\): move it onto its outline/.test(l),
    ),
    said.join('\n'),
  );
  assert.equal(passed.pass, true);
  assert.ok((passed.maxErrorMm as number) < 10);
  const ran = journal.find((e) => e.action === 'ran')!.detail.placement as Record<string, unknown>;
  assert.equal(ran.checked, true);
  assert.equal(ran.maxErrorMm, passed.maxErrorMm);
  assert.match(String(ran.calibrationSha256), /^[0-9a-f]{64}$/);
});

test('a correct placement passes at once; a station without an overhead camera runs unchecked and says so', async () => {
  const ok = await session(cellPreset(), 0);
  assert.deepEqual(actions(ok.journal), ['shown', 'placement-checked', 'placed', 'running', 'ran']);
  assert.ok(
    ok.said.some((l) => /^Placement checked: every object within 10 mm and 10°/.test(l)),
    ok.said.join('\n'),
  );

  const bare = await session({ ...cellPreset(), cameras: [] }, 20);
  assert.deepEqual(actions(bare.journal), ['shown', 'placement-checked', 'placed', 'running', 'ran']);
  assert.equal(
    bare.journal.find((e) => e.action === 'ran')!.detail.placement &&
      (bare.journal.find((e) => e.action === 'ran')!.detail.placement as { checked: boolean }).checked,
    false,
  );
  assert.ok(
    bare.said.includes(
      'Placement not checked: the station has no overhead camera (cam_high) in its config. This rollout runs unchecked.',
    ),
    bare.said.join('\n'),
  );
});

test('the verdict names the worst object over either limit, and an object not seen at all', () => {
  const t = { maxErrorMm: 10, maxErrorDeg: 10 };
  const base = { checked: true as const, camera: 'cam_high', calibrationSha256: 'x' };
  assert.equal(
    placementVerdict(
      {
        ...base,
        objects: [
          { id: 'a', errorMm: 3, errorDeg: 2 },
          { id: 'b', errorMm: 4, errorDeg: 25 },
        ],
      },
      t,
    ).sentence,
    'b is turned 25.0° from its outline (limit 10°): move it onto its outline, then confirm again.',
  );
  const gone = placementVerdict(
    {
      ...base,
      objects: [
        { id: 'a', errorMm: 3 },
        { id: 'b', errorMm: Infinity },
      ],
    },
    t,
  );
  assert.equal(gone.pass, false);
  assert.equal(gone.object, 'b');
  assert.equal(
    placementVerdict({ ...base, objects: [{ id: 'a', errorMm: 9.9 }] }, { maxErrorMm: 5, maxErrorDeg: 10 }).pass,
    false,
  );
});
