import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SortPolicy, codePolicyFromSpec } from '../../../src/policy/code/index.js';

// code:sort-from-tote's spec and graded variants. Its grasps do not hold yet (docs/code-policies.md:
// the pads close 14–18 mm above the parts), so there is no end-to-end sorting test here yet.

test('code:sort-from-tote?skill=0.5 is a graded variant with its own checkpoint; skill out of range is refused', () => {
  const full = codePolicyFromSpec('code:sort-from-tote')!;
  const half = codePolicyFromSpec('code:sort-from-tote?skill=0.5')!;
  assert.equal(full.info.name, 'code:sort-from-tote');
  assert.equal(half.info.name, 'code:sort-from-tote?skill=0.5');
  assert.notEqual(full.info.checkpointSha256, half.info.checkpointSha256);
  assert.throws(() => new SortPolicy({ skill: 2 }), /skill must be from 0 to 1/);
});
