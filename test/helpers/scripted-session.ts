/**
 * A session without a rig for the engine's tests: a runner that stores real rollout rows on a real
 * store file, and a scripted operator that scores every bottle for the bottles policy and none for
 * the others (so the strong and the weak policy are known whatever their blind labels).
 */
import assert from 'node:assert/strict';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import type { Store } from '../../src/store/store.js';
import { buildSessionPlan, type SessionPlan } from '../../src/session/plan.js';
import { runSession, startSession } from '../../src/session/engine.js';
import { getTask } from '../../src/tasks/registry.js';
import type { OperatorStep, SessionOperator, SessionRolloutRunner } from '../../src/session/ports.js';

export function rowRunner(store: Store, set: LayoutSet): SessionRolloutRunner {
  return {
    run(r) {
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const rolloutId = store.insertRollout({
        kind: 'real',
        sessionId: r.sessionId,
        policyId: policy.id,
        layoutSetSha256: set.sha256,
        layoutIndex: r.layout.index,
        episodeSeconds: 1,
        controlHz: 50,
        status: 'valid',
      });
      return Promise.resolve({ rolloutId, status: 'valid', finalMode: 'damped', wallS: 0.01 });
    },
  };
}

export function bottlesScoringOperator(plan: SessionPlan, said: string[]): SessionOperator {
  const done = (step: OperatorStep): boolean =>
    plan.policies.find((p) => p.label === step.label)!.spec === 'code:bottles-in-the-bin';
  return {
    name: 'scripted',
    say: (line) => void said.push(line),
    refused: (m) => assert.fail(m),
    place: () => Promise.resolve({ action: 'confirm', simulatedS: 1 }),
    score: (step) =>
      Promise.resolve({ action: 'score-count', count: done(step) ? step.layout.objects.length : 0, simulatedS: 1 }),
    reset: () => Promise.resolve({ simulatedS: 1 }),
    offerRedo: () => Promise.resolve(false),
    paused: () => Promise.resolve(true),
    breakReminder: () => Promise.resolve({ simulatedS: 0 }),
  };
}

/**
 * A two-policy session of `specs` run in `store` with the row-storing runner and the bottles-scoring
 * operator — what a station finds in its data folder from an earlier hour: run to its end, to its
 * pre-registered stopping rule (`stopEarly`), or stopped for now once `stopAfter` rollouts are done.
 */
export async function seedSession(
  store: Store,
  set: LayoutSet,
  o: {
    readonly specs: readonly string[];
    readonly perLayout: number;
    readonly seed: number;
    readonly analysis?: { readonly alpha?: number };
    readonly stopEarly?: boolean;
    readonly stopAfter?: number;
  },
): Promise<{ id: number; plan: SessionPlan }> {
  const plan = buildSessionPlan({
    set,
    specs: o.specs,
    perLayout: o.perLayout,
    blind: true,
    seed: o.seed,
    episodeSeconds: 1,
    ...(o.analysis ? { analysis: o.analysis } : {}),
  });
  const id = startSession(store, plan, set, 'seeded', { stopEarly: o.stopEarly === true });
  const scoring = bottlesScoringOperator(plan, []);
  let placed = 0;
  const operator: SessionOperator = {
    ...scoring,
    place(step) {
      if (o.stopAfter !== undefined && placed >= o.stopAfter) return Promise.resolve({ action: 'stop' });
      placed += 1;
      return scoring.place(step);
    },
  };
  await runSession({
    store,
    sessionId: id,
    plan,
    set,
    task: getTask(set.task),
    runner: rowRunner(store, set),
    operator,
    signal: new AbortController().signal,
    stopEarly: o.stopEarly === true,
  });
  return { id, plan };
}
