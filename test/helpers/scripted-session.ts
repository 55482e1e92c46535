/**
 * A session without a rig for the engine's tests: a runner that stores real rollout rows on a real
 * store file, and a scripted operator that scores every bottle for the bottles policy and none for
 * the others (so the strong and the weak policy are known whatever their blind labels).
 */
import assert from 'node:assert/strict';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import type { Store } from '../../src/store/store.js';
import type { SessionPlan } from '../../src/session/plan.js';
import type { OperatorStep, SessionOperator, SessionRolloutRunner } from '../../src/session/ports.js';

export function rowRunner(store: Store, set: LayoutSet): SessionRolloutRunner {
  return {
    run(r) {
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const rolloutId = store.insertRollout({ kind: 'real', sessionId: r.sessionId, policyId: policy.id, layoutSetSha256: set.sha256, layoutIndex: r.layout.index, episodeSeconds: 1, controlHz: 50, status: 'valid' });
      return Promise.resolve({ rolloutId, status: 'valid', finalMode: 'damped', wallS: 0.01 });
    },
  };
}

export function bottlesScoringOperator(plan: SessionPlan, said: string[]): SessionOperator {
  const done = (step: OperatorStep): boolean => plan.policies.find((p) => p.label === step.label)!.spec === 'code:bottles-in-the-bin';
  return {
    name: 'scripted',
    say: (line) => void said.push(line),
    refused: (m) => assert.fail(m),
    place: () => Promise.resolve({ action: 'confirm', simulatedS: 1 }),
    score: (step) => Promise.resolve({ action: 'score-count', count: done(step) ? step.layout.objects.length : 0, simulatedS: 1 }),
    reset: () => Promise.resolve({ simulatedS: 1 }),
    offerRedo: () => Promise.resolve(false),
    paused: () => Promise.resolve(true),
    breakReminder: () => Promise.resolve({ simulatedS: 0 }),
  };
}
