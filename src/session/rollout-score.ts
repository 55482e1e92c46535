/**
 * The operator's score of one stored rig rollout outside a session (`tandem score --rollout`, the
 * Rollouts page): scored against its own layout by the task's rule, kept in the store. One score
 * per rollout; scoring it again needs a reason, and the earlier score is kept beside it (the store
 * appends, the latest is in force) — as a session journals its corrections. A session's rollouts
 * are scored in that session, whose journal keeps them.
 */
import { layoutAt } from '../layouts/layout-set.js';
import { LayoutSetError } from '../layouts/errors.js';
import { TaskInputError } from '../tasks/errors.js';
import { getTask } from '../tasks/registry.js';
import type { ObjectEndState } from '../tasks/types.js';
import { StoreError, type Store } from '../store/store.js';
import { endStatesFromCount } from './score-entry.js';

/** A score the rollout cannot take, in one sentence an operator can act on. */
export class RolloutScoreRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RolloutScoreRefusal';
  }
}

export interface RolloutScoreInput {
  readonly rolloutId: number;
  /** Each object's end state; or `count`: how many ended in the task's region (or upright), for tasks scored by a count. */
  readonly endStates?: readonly ObjectEndState[];
  readonly count?: number;
  /** Why a scored rollout is scored again (required then). */
  readonly reason?: string;
  readonly operator?: string | null;
}

export interface RolloutScored {
  readonly rolloutId: number;
  readonly scoreId: number;
  readonly rescored: boolean;
  readonly rehearsal: boolean;
  readonly task: string;
  readonly layoutSet: string;
  readonly version: number;
  readonly layout: number;
  readonly tier: number;
  readonly progress: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly summary: string;
}

export function scoreStoredRollout(store: Store, input: RolloutScoreInput): RolloutScored {
  const id = input.rolloutId;
  const reason = input.reason?.trim();
  if (reason === '')
    throw new RolloutScoreRefusal('A re-score needs a few words saying why the rollout is scored again.');
  const r = store.getRollout(id);
  if (!r)
    throw new RolloutScoreRefusal(
      `There is no rollout ${id} in the store ${store.file}; 'tandem rig rollout' prints the id of each rollout it stores.`,
    );
  if (r.kind !== 'real')
    throw new RolloutScoreRefusal(
      `Rollout ${id} ran in the sim, which scores it from its own end state; only rig rollouts take an operator's score.`,
    );
  if (r.status !== 'valid')
    throw new RolloutScoreRefusal(
      `Rollout ${id} is ${r.status}${r.statusReason ? ` (${r.statusReason.replace(/\.$/, '')})` : ''}; invalid and aborted rollouts are never scored.`,
    );
  if (r.sessionId !== null)
    throw new RolloutScoreRefusal(
      `Rollout ${id} belongs to session ${r.sessionId}, whose journal keeps its scores; score it in that session ('tandem session resume ${r.sessionId}' or the Session page).`,
    );
  const earlier = store.listOperatorScores(id);
  if (earlier.length > 0 && reason === undefined) {
    const last = earlier[earlier.length - 1];
    throw new RolloutScoreRefusal(
      `Rollout ${id} was scored ${last.progress.toFixed(2)} already (${last.enteredAt}${last.operator ? ` by ${last.operator}` : ''}); to score it again, say why with a reason (the earlier score is kept).`,
    );
  }
  const set = store.loadLayoutSet(r.layoutSetSha256);
  if (!set)
    throw new RolloutScoreRefusal(
      `Rollout ${id}'s layout set ${r.layoutSetSha256.slice(0, 12)}… is not in the store; it cannot be scored against its layout.`,
    );
  const task = getTask(set.task);
  let progress;
  let layout;
  let endStates: readonly ObjectEndState[];
  try {
    layout = layoutAt(set, r.layoutIndex);
    endStates = input.endStates ?? endStatesFromCount(task, layout, input.count ?? 0);
    progress = task.scoreProgress(layout, endStates);
  } catch (e) {
    if (e instanceof LayoutSetError || e instanceof TaskInputError) throw new RolloutScoreRefusal(e.message);
    throw e;
  }
  let scoreId: number;
  try {
    scoreId = store.insertOperatorScore({
      rolloutId: id,
      endStates,
      progress: progress.progress,
      counts: progress.counts,
      operator: input.operator ?? null,
      note: reason ?? null,
    });
  } catch (e) {
    if (e instanceof StoreError) throw new RolloutScoreRefusal(e.message);
    throw e;
  }
  return {
    rolloutId: id,
    scoreId,
    rescored: earlier.length > 0,
    rehearsal: r.rehearsal,
    task: task.id,
    layoutSet: set.sha256,
    version: set.version,
    layout: r.layoutIndex,
    tier: layout.tier,
    progress: progress.progress,
    counts: progress.counts,
    summary: progress.summary,
  };
}
