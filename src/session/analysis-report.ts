/**
 * A session's pre-registered analysis for the report: the verdict by the plan's own metric and
 * α over the session's scored pairs, whether the session stopped early by it, and the rollouts
 * and minutes saved against the fixed-N plan. A report that asks for another metric or α than
 * the plan pre-registered is refused: that would be choosing the analysis after the data.
 */
import type { Store } from '../store/store.js';
import type { PreregisteredAnalysisSummary } from '../analysis/anytime-ab.js';
import { analysisSoFar } from './ab-verdict.js';
import { describeAnalysisPlan, type AnalysisMetric } from './analysis-plan.js';
import { JOURNAL, sessionProgress } from './journal-state.js';
import { parseSessionPlan, SessionPlanError, type SessionPlan } from './plan.js';

export class PreregistrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PreregistrationError';
  }
}

export interface AskedAnalysis {
  readonly session: number;
  /** What the report was asked for; each must equal the plan's, or the report is refused. */
  readonly alpha?: number;
  readonly metric?: AnalysisMetric;
}

export function preregisteredAnalysis(store: Store, asked: AskedAnalysis): PreregisteredAnalysisSummary {
  const id = asked.session;
  const stored = store.getSessionPlan(id);
  if (!stored) throw new PreregistrationError(`There is no evaluation session ${id} in the store (${store.file}).`);
  let plan: SessionPlan;
  try {
    plan = parseSessionPlan(stored.planJson, `session ${id}'s plan`);
  } catch (e) {
    if (e instanceof SessionPlanError) throw new PreregistrationError(e.message);
    throw e;
  }
  const ap = plan.analysis;
  if (!ap)
    throw new PreregistrationError(
      `Session ${id} has no pre-registered analysis plan, so there is none to report; leave out --session (and --alpha, --metric).`,
    );
  const terms = describeAnalysisPlan(ap);
  if (asked.alpha !== undefined && asked.alpha !== ap.alpha) {
    throw new PreregistrationError(
      `Session ${id} pre-registered α ${ap.alpha} (${terms}); a report at α ${asked.alpha} is not the pre-registered analysis: give --alpha ${ap.alpha} or leave it out.`,
    );
  }
  if (asked.metric !== undefined && asked.metric !== ap.metric) {
    throw new PreregistrationError(
      `Session ${id} pre-registered the metric ${ap.metric} (${terms}); a report on ${asked.metric} is not the pre-registered analysis: give --metric ${ap.metric} or leave it out.`,
    );
  }
  const journal = store.listSessionJournal(id);
  const verdict = analysisSoFar(plan, journal)!;
  const stoppedEarly = journal.some((e) => e.action === JOURNAL.stoppedEarly);
  const progress = sessionProgress(plan, journal, Date.now());
  const rolloutsSaved = stoppedEarly ? progress.total - progress.done : 0;
  const perRolloutS = progress.done > 0 ? progress.elapsedS / progress.done : 0;
  const minutesSaved = Math.round(((rolloutsSaved * perRolloutS) / 60) * 10) / 10;
  const saving = stoppedEarly
    ? `Stopped early by its pre-registered rule after ${verdict.pairs} of ${verdict.maxPairs} pairs: ${rolloutsSaved} of the fixed-N plan's ${progress.total} rollouts saved (about ${minutesSaved} min at this session's pace).`
    : `Not stopped early: ${progress.done} of the plan's ${progress.total} rollouts run.`;
  return {
    session: id,
    analysisSha256: ap.sha256,
    metric: ap.metric,
    alpha: ap.alpha,
    margin: ap.margin,
    stoppingRule: ap.stoppingRule,
    a: ap.a,
    b: ap.b,
    verdict,
    stoppedEarly,
    plannedRollouts: progress.total,
    rolloutsRun: progress.done,
    rolloutsSaved,
    minutesSaved,
    sentence: `Session ${id}, pre-registered ${terms}: ${verdict.sentence} ${saving}`,
  };
}
