import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { readIndexed } from '../helpers/mcap.js';
import { LAYOUT_SET_FORMAT, parseLayoutSet, pinLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';
import { TOPICS } from '../../src/record/episode-format.js';
import type { Layout } from '../../src/tasks/types.js';

// Task events come from the sim's own scene through the one rollout loop: the sweep's worker
// threads carry them back, the store keeps them with the rollout, and the episode file has the
// same events on /tandem/events — what the failure breakdown and a reward are built from.

test("a sweep of the bottles code policy stores each object's story (grasped, released, into the bin, +1) and records the same events in its episode file", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-task-events-'));
  try {
    const golden = parseLayoutSet(readFileSync('test/fixtures/layouts/bottles-golden.json', 'utf8'), 'golden');
    const tier1 = golden.layouts.find((l) => l.tier === 1)!;
    const layouts = join(dir, 'one.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(
        pinLayoutSet({
          format: LAYOUT_SET_FORMAT,
          task: golden.task,
          version: 1,
          seed: 0,
          tiers: [1],
          layouts: [{ ...tier1, index: 0 }],
        }),
      ),
    );
    const data = join(dir, 'data');
    const r = await runTandem([
      'sim',
      'sweep',
      '--policy',
      'code:bottles-in-the-bin',
      '--layouts',
      layouts,
      '--workers',
      '1',
      '--seconds',
      '25',
      '--data',
      data,
      '--record',
      join(dir, 'episodes'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const [row] = store.listRollouts({ kind: 'sim' });
      assert.equal(row.progress, 1, 'the tier-1 bottle ends in the bin');
      const events = store.listTaskEvents(row.id);
      const story = events
        .filter((e) => e.objectId === tier1.objects[0].id || e.kind === 'progress')
        .map((e) => e.kind);
      const grasp = story.indexOf('grasped');
      const entered = story.indexOf('entered-region');
      assert.ok(grasp >= 0 && entered > grasp, `grasped before entering the bin: ${story.join(', ')}`);
      assert.ok(story.includes('released'));
      const progress = events.filter((e) => e.kind === 'progress');
      assert.deepEqual(
        progress.map((e) => [e.done, e.total, e.delta]),
        [[1, 1, 1]],
      );
      assert.ok(
        events.every((e, i) => i === 0 || e.timeS >= events[i - 1].timeS),
        'in time order',
      );
      assert.ok(
        events.every((e) => e.timeS >= 0 && e.timeS <= 25 + 0.5 + 1e-9),
        'episode time, within the steps and the settle',
      );

      const ep = await readIndexed(row.episodeFile!);
      const recorded = ep.byTopic
        .get(TOPICS.events)!
        .map((m) => m.message as { kind: string; detail_json: string })
        .filter((m) => m.kind === 'task')
        .map((m) => JSON.parse(m.detail_json) as { task_event: string; object?: string; episode_time_s: number });
      assert.deepEqual(
        recorded.map((d) => [d.task_event, d.object ?? null, d.episode_time_s]),
        events.map((e) => [e.kind, e.objectId ?? null, e.timeS]),
        'the file and the store tell the same story',
      );
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bottle that drops off the table edge under a holding policy is one off-table event, and an untouched layout has none', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-task-events-edge-'));
  try {
    const bin = { id: 'bin', kind: 'bin', pose: { x: 0.1, y: -0.3, yawRad: 0 } } as const;
    const LAYOUTS: Layout[] = [
      {
        index: 0,
        tier: 1,
        fixtures: [bin],
        objects: [{ id: 'bottle-0', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.1, y: 0.1, yawRad: 0 } }],
      },
      {
        index: 1,
        tier: 1,
        fixtures: [bin],
        objects: [{ id: 'bottle-0', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.53, y: 0.3, yawRad: 0 } }],
      },
    ];
    const file = join(dir, 'edge.json');
    writeFileSync(
      file,
      serializeLayoutSet(
        pinLayoutSet({
          format: LAYOUT_SET_FORMAT,
          task: 'bottles-in-the-bin',
          version: 1,
          seed: 0,
          tiers: [1],
          layouts: LAYOUTS,
        }),
      ),
    );
    const data = join(dir, 'data');
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
      '0.5',
      '--data',
      data,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({ kind: 'sim' }).sort((a, b) => a.layoutIndex - b.layoutIndex);
      assert.deepEqual(store.listTaskEvents(rows[0].id), []);
      const fell = store.listTaskEvents(rows[1].id).filter((e) => e.kind === 'off-table');
      assert.deepEqual(
        fell.map((e) => e.objectId),
        ['bottle-0'],
      );
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
