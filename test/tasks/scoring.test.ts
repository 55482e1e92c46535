import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getTask } from '../../src/tasks/registry.js';
import { TaskInputError } from '../../src/tasks/errors.js';
import type { Layout, LayoutObject, ObjectEndState, Posture } from '../../src/tasks/types.js';

const pose = { x: 0, y: 0, yawRad: 0 };
const obj = (id: string, kind: string, posture: Posture = 'upright'): LayoutObject => ({ id, kind, posture, pose });
const layout = (objects: LayoutObject[]): Layout => ({ index: 0, tier: 3, fixtures: [], objects });
const throwsSentence = (fn: () => unknown, re: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof TaskInputError && re.test(e.message) && !e.message.includes('\n'));

const bottles = getTask('bottles-in-the-bin');
const mugs = getTask('mug-flipping');
const sort = getTask('sort-from-tote');

test('bottles: bottles in the bin ÷ target bottles, counts beside the ratio', () => {
  const l = layout([
    obj('bottle-1', 'bottle-500ml'),
    obj('bottle-2', 'bottle-500ml', 'lying'),
    obj('bottle-3', 'bottle-500ml'),
    obj('bottle-4', 'bottle-500ml'),
  ]);
  const p = bottles.scoreProgress(l, [
    { id: 'bottle-1', region: 'bin' },
    { id: 'bottle-2', region: 'bin' },
    { id: 'bottle-3', region: 'bin' },
    { id: 'bottle-4' },
  ]);
  assert.equal(p.progress, 0.75);
  assert.deepEqual(p.counts, { inBin: 3, target: 4 });
  assert.equal(p.summary, '3 of 4 bottles in the bin (progress 0.75).');
  assert.equal(
    bottles.scoreProgress(
      l,
      l.objects.map((o) => ({ id: o.id })),
    ).progress,
    0,
  );
});

test('end states naming unknown objects or regions, or missing an object, are refused', () => {
  const l = layout([obj('bottle-1', 'bottle-500ml'), obj('bottle-2', 'bottle-500ml')]);
  throwsSentence(
    () =>
      bottles.scoreProgress(l, [
        { id: 'bottle-1', region: 'bin' },
        { id: 'bottle-2' },
        { id: 'bottle-9', region: 'bin' },
      ]),
    /'bottle-9', which is not in layout 0/,
  );
  throwsSentence(() => bottles.scoreProgress(l, [{ id: 'bottle-1', region: 'bin' }]), /no entry for bottle-2/);
  throwsSentence(
    () => bottles.scoreProgress(l, [{ id: 'bottle-1', region: 'bucket' }, { id: 'bottle-2' }]),
    /region 'bucket'.*regions: bin/,
  );
  throwsSentence(() => bottles.scoreProgress(l, [{ id: 'bottle-1' }, { id: 'bottle-1' }, { id: 'bottle-2' }]), /twice/);
  throwsSentence(
    () => bottles.scoreProgress(l, [{ id: 'bottle-1' }, { nope: 1 } as unknown as ObjectEndState]),
    /entry 2 has no object id/,
  );
});

const mugLayout = (...postures: Posture[]) => layout(postures.map((p, i) => obj(`mug-${i + 1}`, 'mug-350ml', p)));
const ends = (...upright: boolean[]): ObjectEndState[] => upright.map((u, i) => ({ id: `mug-${i + 1}`, upright: u }));

test('mugs: newly upright ÷ not upright at start', () => {
  const l = mugLayout('lying', 'upside-down', 'upright', 'lying');
  const p = mugs.scoreProgress(l, ends(true, false, true, true));
  assert.deepEqual(p.counts, { newlyUpright: 2, knockedOver: 0, notUprightAtStart: 3, uprightAtStart: 1 });
  assert.equal(p.progress, 2 / 3);
  assert.match(
    p.summary,
    /^2 of 3 mugs that started not upright are upright now, 0 of 1 upright mug knocked over \(progress 0\.67\)\.$/,
  );
});

test('mugs: each upright mug knocked over takes one flip back', () => {
  const l = mugLayout('lying', 'upside-down', 'upright', 'upright');
  assert.equal(mugs.scoreProgress(l, ends(true, true, false, true)).progress, 0.5);
  assert.equal(mugs.scoreProgress(l, ends(true, true, true, true)).progress, 1);
});

test('mugs: more knocked over than flipped floors at 0, not below', () => {
  const l = mugLayout('lying', 'upright', 'upright');
  const p = mugs.scoreProgress(l, ends(false, false, false));
  assert.equal(p.progress, 0);
  assert.deepEqual(p.counts, { newlyUpright: 0, knockedOver: 2, notUprightAtStart: 1, uprightAtStart: 2 });
  assert.equal(mugs.scoreProgress(l, ends(true, false, false)).progress, 0);
});

test('mugs: a mug that stays lying or turns from upside down to lying earns nothing', () => {
  const l = mugLayout('upside-down', 'lying');
  assert.equal(mugs.scoreProgress(l, ends(false, false)).progress, 0);
});

test('mugs: a layout where no mug starts non-upright cannot be scored', () => {
  throwsSentence(
    () => mugs.scoreProgress(mugLayout('upright', 'upright'), ends(true, true)),
    /no mug that starts lying or upside down/,
  );
});

test('mugs: every mug needs an upright entry', () => {
  throwsSentence(
    () => mugs.scoreProgress(mugLayout('lying', 'upright'), [{ id: 'mug-1', upright: true }, { id: 'mug-2' }]),
    /'mug-2' has no "upright"/,
  );
  throwsSentence(
    () => mugs.scoreProgress(mugLayout('lying'), [{ id: 'mug-1', upright: 'yes' as unknown as boolean }]),
    /must be true or false/,
  );
});

test('sort: parts in their correct slot ÷ all parts; wrong slots and the tote count as not done', () => {
  const l = layout([
    obj('screw-1', 'screw-m4x20', 'lying'),
    obj('bolt-1', 'bolt-m8x40', 'lying'),
    obj('nut-1', 'nut-m8'),
    obj('bearing-ring-1', 'ring-6200'),
    obj('nut-2', 'nut-m6'),
  ]);
  const p = sort.scoreProgress(l, [
    { id: 'screw-1', region: 'slot:screw' },
    { id: 'bolt-1', region: 'slot:nut' },
    { id: 'nut-1', region: 'slot:nut' },
    { id: 'bearing-ring-1', region: 'slot:bearing-ring' },
    { id: 'nut-2', region: 'tote' },
  ]);
  assert.equal(p.progress, 3 / 5);
  assert.deepEqual(p.counts, { inCorrectSlot: 3, inWrongSlot: 1, elsewhere: 1, total: 5 });
  assert.equal(p.summary, '3 of 5 parts in their correct slot, 1 in a wrong slot, 1 elsewhere (progress 0.6).');
});
