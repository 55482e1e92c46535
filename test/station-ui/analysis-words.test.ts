import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anytimeComparison, type AnytimeOptions } from '../../src/analysis/anytime-ab.js';
import { analysisWords, type SessionAnalysis } from '../../station-ui/session/analysis-words.js';

const BLIND = { a: 'policy A', b: 'policy B' };
const PLAN: AnytimeOptions = { alpha: 0.1, margin: 0.1, stoppingRule: 'difference-or-no-difference', maxPairs: 12 };

/** What the station returns after these pairs' B − A (the engine's own comparison, as the results API carries it). */
function after(diffs: number[], o: Partial<AnytimeOptions> = {}, stoppedEarly = false): SessionAnalysis {
  return {
    ...anytimeComparison(diffs, { ...PLAN, ...o, names: BLIND }),
    analysisSha256: 'ab'.repeat(32),
    stoppedEarly,
  };
}

test('the analysis panel says "B is better by X: you may stop" once the sequence excludes zero, and that the session stopped itself when it did', () => {
  const live = analysisWords(after(Array(8).fill(1)), BLIND, false);
  assert.equal(live.state, 'stop');
  assert.equal(live.headline, 'policy B is better by 1.00: you may stop.');
  assert.equal(live.estimate, 'policy B − policy A: +1.00 so far');
  assert.match(live.range, /^90% confidence sequence: \+0\.\d\d to \+1\.00 \(valid at every look\)$/);
  assert.equal(live.pairs, "8 of the plan's 12 pairs scored");
  assert.equal(live.outcome, null);
  const stopped = analysisWords(after(Array(8).fill(1), {}, true), BLIND, true);
  assert.equal(stopped.headline, 'policy B is better by 1.00.');
  assert.equal(
    stopped.outcome,
    'The session stopped itself here, by its pre-registered rule: 4 pairs of the plan not needed.',
  );
  // A the better one: A is named, by how much from the estimate's size.
  assert.equal(
    analysisWords(after([-1, -0.5, -1, -1, -1, -1, -1, -1, -1, -1]), BLIND, false).headline,
    'policy A is better by 0.95: you may stop.',
  );
});

test('"no difference larger than Y: you may stop" when the sequence lies within the margin; "about N more pairs" while neither rule holds; "no verdict" once the plan is done', () => {
  const none = analysisWords(after(Array(40).fill(0), { margin: 0.4, maxPairs: 40 }), BLIND, false);
  assert.equal(none.state, 'stop');
  assert.match(none.headline, /^No difference larger than 0\.[0-3]\d: you may stop\.$/);
  const early = analysisWords(after([1, 1]), BLIND, false);
  assert.equal(early.state, 'continue');
  assert.match(early.headline, /^Not clear yet\. About \d+ more pairs at the least\.$/);
  const three = analysisWords(after([1, 1, 1]), BLIND, false);
  assert.match(three.headline, /^Not clear yet\. About [1-9] more pairs?\.$/);
  assert.equal(analysisWords(after([]), BLIND, false).headline.startsWith('No pair scored yet. About'), true);
  assert.equal(analysisWords(after([]), BLIND, false).estimate, 'policy B − policy A: no pair yet');
  const over = analysisWords(after([1], { maxPairs: 1 }), BLIND, true);
  assert.equal(over.state, 'undecided');
  assert.equal(over.headline, "No verdict: the plan's 1 pair is done and neither rule holds.");
  assert.equal(over.outcome, 'The session is over.');
  assert.equal(
    analysisWords(after([1, 0], { maxPairs: 6, ended: true }), BLIND, true).headline,
    "No verdict: the session ended after 2 of the plan's 6 pairs and neither rule holds.",
  );
});

test('blind-safe: the panel names only the labels it is given', () => {
  const w = analysisWords(after(Array(8).fill(1)), BLIND, false);
  assert.doesNotMatch(Object.values(w).join(' '), /code:|onnx:|ws:/);
});
