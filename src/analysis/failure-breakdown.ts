/**
 * The paired report's failure breakdown: per tier and object kind, the share of target objects that
 * failed in sim and on the real rig, by failure pattern, each cell traceable to its rollouts.
 */
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { objectOutcomes, parseObjectOutcomeCounts } from '../tasks/object-outcomes.js';
import { classifyObjectFailures, FAILURE_PATTERNS, type FailurePattern } from '../tasks/failure-patterns.js';
import type { ReportRollout, FailureCell, FailureRow, EndStateFallback, PairedReport } from './paired-report-types.js';

type FailureBreakdown = PairedReport['failures'] & { readonly simLeftOut: readonly number[] };

export function failureBreakdown(
  task: TaskDefinition,
  layouts: readonly Layout[],
  scored: readonly ReportRollout[],
): FailureBreakdown {
  type Cell = { objects: number; fromEndState: number; rolloutIds: Set<number> };
  const cells = new Map<string, { sim: Cell; real: Cell }>();
  const totals = new Map<string, { sim: number; real: number }>();
  const key = (tier: number, kind: string): string => `${tier}\u0000${kind}`;
  /** n objects of `kind` in rollout r: a target of the task (counted in the share's total), failed as `pattern` or not at all. */
  const add = (
    r: ReportRollout,
    kind: string,
    n: number,
    target: boolean,
    pattern: FailurePattern | undefined,
    fromEndState: boolean,
  ): void => {
    const tk = key(r.tier, kind);
    const t = totals.get(tk) ?? { sim: 0, real: 0 };
    if (target) t[r.kind] += n;
    totals.set(tk, t);
    if (!pattern) return;
    const ck = `${tk}\u0000${pattern}`;
    let c = cells.get(ck);
    if (!c)
      cells.set(
        ck,
        (c = {
          sim: { objects: 0, fromEndState: 0, rolloutIds: new Set() },
          real: { objects: 0, fromEndState: 0, rolloutIds: new Set() },
        }),
      );
    c[r.kind].objects += n;
    if (fromEndState) c[r.kind].fromEndState += n;
    if (n > 0) c[r.kind].rolloutIds.add(r.id);
  };
  const endStatePattern = (o: string): FailurePattern | undefined =>
    o === 'off-table' || o === 'knocked-over' || o === 'left-undone' ? o : undefined;
  const notes: string[] = [];
  const fallbacks: EndStateFallback[] = [];
  let realWithoutEndStates = 0;
  const simLeftOut: number[] = [];
  for (const r of scored) {
    const layout = layouts[r.layoutIndex];
    const events = r.taskEvents ?? [];
    const outcomeCounts = r.kind === 'sim' && r.counts ? parseObjectOutcomeCounts(r.counts) : undefined;
    const endStates = r.kind === 'real' && r.endStates && r.endStates.length > 0 ? r.endStates : undefined;
    let why: string;
    if (events.length > 0) {
      const c = classifyObjectFailures(task, layout, {
        events,
        endStates,
        outcomeCounts,
        ranFullLength: r.outcome === 'completed',
      });
      if (c.ok) {
        for (const o of c.objects)
          add(
            r,
            o.kind,
            1,
            o.result !== 'not-a-target',
            o.result === 'done' || o.result === 'not-a-target' ? undefined : o.result,
            false,
          );
        continue;
      }
      why = c.why;
    } else why = 'no task events were stored with it';
    // The end-state classifier: where each object ended, not how it got there.
    if (r.kind === 'real') {
      if (!endStates) {
        realWithoutEndStates += 1;
        continue;
      }
      fallbacks.push({ id: r.id, kind: r.kind, why });
      for (const o of objectOutcomes(task, layout, endStates))
        add(r, o.kind, 1, o.outcome !== 'not-a-target', endStatePattern(o.outcome), true);
    } else {
      if (!outcomeCounts) {
        simLeftOut.push(r.id);
        continue;
      }
      fallbacks.push({ id: r.id, kind: r.kind, why });
      for (const o of outcomeCounts)
        add(r, o.kind, o.n, o.outcome !== 'not-a-target', endStatePattern(o.outcome), true);
    }
  }
  if (realWithoutEndStates > 0)
    notes.push(
      `${realWithoutEndStates} real rollout${realWithoutEndStates === 1 ? ' was' : 's were'} scored without per-object end states and without task events, and ${realWithoutEndStates === 1 ? 'is' : 'are'} not in the breakdown.`,
    );
  if (simLeftOut.length > 0)
    notes.push(
      `${simLeftOut.length} sim rollout${simLeftOut.length === 1 ? ' was' : 's were'} stored before per-object outcomes and task events were kept, and ${simLeftOut.length === 1 ? 'is' : 'are'} not in the breakdown.`,
    );
  for (const side of ['sim', 'real'] as const) {
    const mine = fallbacks.filter((f) => f.kind === side);
    if (mine.length === 0) continue;
    const whys = [...new Set(mine.map((f) => f.why))];
    notes.push(
      `${mine.length} ${side} rollout${mine.length === 1 ? ' is' : 's are'} classified from the end state alone (${whys.slice(0, 3).join('; ')}${whys.length > 3 ? '; …' : ''}): there 'left undone' covers both never grasped and dropped in transit. Rollout ids: ${mine.map((f) => f.id).join(', ')}.`,
    );
  }
  const rows: FailureRow[] = [];
  for (const [ck, c] of cells) {
    const [tier, kind, pattern] = ck.split('\u0000');
    const t = totals.get(key(Number(tier), kind))!;
    const cell = (side: 'sim' | 'real'): FailureCell => ({
      objects: c[side].objects,
      of: t[side],
      share: t[side] ? c[side].objects / t[side] : 0,
      rolloutIds: [...c[side].rolloutIds],
      fromEndState: c[side].fromEndState,
    });
    rows.push({ tier: Number(tier), kind, pattern: pattern as FailurePattern, sim: cell('sim'), real: cell('real') });
  }
  rows.sort(
    (a, b) =>
      a.tier - b.tier ||
      a.kind.localeCompare(b.kind) ||
      Math.max(b.sim.share, b.real.share) - Math.max(a.sim.share, a.real.share) ||
      FAILURE_PATTERNS.indexOf(a.pattern) - FAILURE_PATTERNS.indexOf(b.pattern),
  );
  // Out of time: the episode ran its full length and the task was not done.
  const tiers = [...new Set(scored.map((r) => r.tier))].sort((a, b) => a - b);
  const outOfTime = tiers.map((tier) => {
    const side = (kind: 'sim' | 'real') => {
      const all = scored.filter((r) => r.kind === kind && r.tier === tier);
      const late = all.filter((r) => r.outcome === 'completed' && r.progress! < 1);
      return { rollouts: late.length, of: all.length, rolloutIds: late.map((r) => r.id) };
    };
    return { tier, sim: side('sim'), real: side('real') };
  });
  return { rows, outOfTime, fromEndState: fallbacks, simLeftOut, notes };
}
