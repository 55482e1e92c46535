import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CodePolicySpecError, codePolicyFromSpec, parseCodePolicySpec } from '../../../src/policy/code/index.js';

test('code policy specs take skill and dense-miss, each once, joined by &; the policy is named by both', () => {
  assert.deepEqual(parseCodePolicySpec('code:bottles-in-the-bin?dense-miss=0.8'), {
    name: 'bottles-in-the-bin',
    options: { denseMiss: 0.8 },
  });
  assert.deepEqual(parseCodePolicySpec('code:bottles-in-the-bin?skill=0.5&dense-miss=1'), {
    name: 'bottles-in-the-bin',
    options: { skill: 0.5, denseMiss: 1 },
  });
  assert.equal(
    codePolicyFromSpec('code:bottles-in-the-bin?dense-miss=0.8')?.info.name,
    'code:bottles-in-the-bin?dense-miss=0.8',
  );
  assert.equal(
    codePolicyFromSpec('code:bottles-in-the-bin?skill=0.5&dense-miss=0.8')?.info.name,
    'code:bottles-in-the-bin?skill=0.5&dense-miss=0.8',
  );
  assert.notEqual(
    codePolicyFromSpec('code:bottles-in-the-bin?dense-miss=0.8')?.info.checkpointSha256,
    codePolicyFromSpec('code:bottles-in-the-bin')?.info.checkpointSha256,
  );
  for (const bad of [
    'code:bottles-in-the-bin?dense-miss=2',
    'code:bottles-in-the-bin?dense-miss=0.5&dense-miss=0.6',
    'code:bottles-in-the-bin?crowd=1',
  ]) {
    assert.throws(
      () => parseCodePolicySpec(bad),
      (e: Error) =>
        e instanceof CodePolicySpecError &&
        /a code policy takes \?skill=S and \?dense-miss=P \(each once, from 0 to 1, joined by &; e\.g\./.test(
          e.message,
        ),
      bad,
    );
  }
});
