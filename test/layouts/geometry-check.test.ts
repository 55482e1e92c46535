import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allTasks, getTask } from '../../src/tasks/registry.js';
import { createRng } from '../../src/layouts/random.js';
import { sampleLayouts } from '../../src/layouts/sample.js';
import { layoutProblems } from '../../src/layouts/geometry-check.js';
import type { Layout } from '../../src/tasks/types.js';

test('sampled layouts break none of the placement rules', () => {
  for (const task of allTasks()) {
    for (const layout of sampleLayouts(task, [1, 3, 5], 3, createRng(77)))
      assert.deepEqual(layoutProblems(task, layout), [], `${task.id} layout ${layout.index}`);
  }
});

test('hand edits that break the rules are named object by object', () => {
  const task = getTask('bottles-in-the-bin');
  const [layout] = sampleLayouts(task, [4], 1, createRng(8));
  const [a, b] = layout.objects;
  const moved = (patch: (l: Layout) => Layout) => layoutProblems(task, patch(layout));
  assert.ok(
    moved((l) => ({
      ...l,
      objects: l.objects.map((o) => (o.id === a.id ? { ...o, pose: { ...o.pose, x: 0.45 } } : o)),
    })).some((p) => p === `layout 0: ${a.id} is out of reach of both arms.`),
  );
  assert.ok(
    moved((l) => ({ ...l, objects: l.objects.map((o) => (o.id === b.id ? { ...o, pose: a.pose } : o)) })).includes(
      `layout 0: ${b.id} overlaps ${a.id}.`,
    ),
  );
  const bin = layout.fixtures[0].pose;
  assert.ok(
    moved((l) => ({ ...l, objects: l.objects.map((o) => (o.id === a.id ? { ...o, pose: bin } : o)) })).includes(
      `layout 0: ${a.id} overlaps the bin.`,
    ),
  );
  assert.ok(
    moved((l) => ({ ...l, fixtures: [{ ...l.fixtures[0], pose: { x: -0.4, y: -0.3, yawRad: 0 } }] })).includes(
      'layout 0: the bin stands on an arm base.',
    ),
  );
});

test('a part moved out of the tote is named', () => {
  const task = getTask('sort-from-tote');
  const [layout] = sampleLayouts(task, [1], 1, createRng(8));
  const first = layout.objects[0];
  const problems = layoutProblems(task, {
    ...layout,
    objects: layout.objects.map((o) => (o === first ? { ...o, pose: { ...o.pose, x: o.pose.x + 0.3 } } : o)),
  });
  assert.ok(problems.includes(`layout 0: ${first.id} is not inside the tote.`), problems.join(' | '));
});
