import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allTasks, getTask } from '../../src/tasks/registry.js';
import { TaskInputError } from '../../src/tasks/errors.js';
import { TASK_IDS } from '../../src/tasks/types.js';

test('getTask returns each of the three tasks by id', () => {
  for (const id of TASK_IDS) assert.equal(getTask(id).id, id);
  assert.deepEqual(
    allTasks().map((t) => t.id),
    ['bottles-in-the-bin', 'mug-flipping', 'sort-from-tote'],
  );
});

test('an unknown task id is refused with a sentence naming the known tasks', () => {
  assert.throws(
    () => getTask('bottles'),
    (e: unknown) => {
      assert.ok(e instanceof TaskInputError);
      assert.match(e.message, /Unknown task 'bottles'/);
      for (const id of TASK_IDS) assert.ok(e.message.includes(id));
      return true;
    },
  );
});

test('every task has tiers 1 to 5 in order, growing in object count', () => {
  for (const task of allTasks()) {
    assert.deepEqual(
      task.tiers.map((t) => t.tier),
      [1, 2, 3, 4, 5],
    );
    for (let i = 1; i < 5; i++)
      assert.ok(task.tiers[i].maxObjects >= task.tiers[i - 1].maxObjects, `${task.id} tier ${i + 1}`);
    for (const t of task.tiers)
      for (const k of t.draw.kinds)
        assert.ok(
          task.objectKinds.some((o) => o.id === k),
          `${task.id} tier ${t.tier} kind ${k}`,
        );
  }
});

test('the tiers say what the reference lab says', () => {
  const bottles = getTask('bottles-in-the-bin').tiers;
  assert.deepEqual([bottles[0].minObjects, bottles[0].maxObjects, bottles[0].draw.postures], [1, 1, ['upright']]);
  assert.deepEqual([bottles[4].minObjects, bottles[4].maxObjects], [4, 5]);
  assert.deepEqual([...bottles[4].draw.postures].sort(), ['lying', 'upright']);
  assert.equal(bottles[4].draw.fixturesVary, true);
  const sort = getTask('sort-from-tote').tiers;
  assert.equal(sort[4].minObjects, 45);
  assert.equal(sort[4].maxObjects, 45);
  const mugs = getTask('mug-flipping').tiers;
  const maxUpsideDown = mugs.map((t) => t.draw.upsideDown?.[1] ?? 0);
  assert.deepEqual(
    maxUpsideDown,
    [...maxUpsideDown].sort((a, b) => a - b),
    'more upside-down mugs at higher tiers',
  );
  assert.ok(maxUpsideDown[4] >= 2);
});
