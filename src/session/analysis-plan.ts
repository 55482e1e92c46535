/**
 * A pre-registered analysis plan: how a two-policy session's A/B comparison will be judged —
 * the metric, α, the maximum number of pairs (the fixed-N plan), the stopping rule and the
 * no-difference margin — fixed before the first rollout. It lives inside the session plan, so the
 * plan's hash pins it; it carries its own hash too, which the session's journal and the report
 * name. Changing it once a rollout of the plan has run is refused: the point of pre-registering is
 * that no one picks the analysis after seeing the data. Pure: no I/O.
 */
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { checkAnytimeOptions, STOPPING_RULES, type StoppingRule } from '../analysis/anytime-ab.js';

/**
 * task-progress: the task's partial credit per object (bottles in the bin ÷ bottles, parts in
 * their slot ÷ parts, …). full-success: 1 when every object is done, else 0.
 */
export const ANALYSIS_METRICS = ['task-progress', 'full-success'] as const;
export type AnalysisMetric = (typeof ANALYSIS_METRICS)[number];

export const DEFAULT_ANALYSIS = {
  metric: 'task-progress',
  alpha: 0.05,
  margin: 0.1,
  stoppingRule: 'difference-or-no-difference',
} as const satisfies {
  metric: AnalysisMetric;
  alpha: number;
  margin: number;
  stoppingRule: StoppingRule;
};

export interface AnalysisPlanBody {
  readonly metric: AnalysisMetric;
  readonly alpha: number;
  /** The fixed-N plan's pairs: the comparison ends there; early stopping saves the rest. */
  readonly maxPairs: number;
  readonly stoppingRule: StoppingRule;
  /** |B − A| within this is "no difference" (the rule 'difference-or-no-difference'). */
  readonly margin: number;
  /** The difference reported is b − a: policy a is the plan's first policy, b its second. */
  readonly a: string;
  readonly b: string;
  /** In words, so the plan file says how it will be judged without reading code. */
  readonly method: string;
}

export interface AnalysisPlan extends AnalysisPlanBody {
  /** Hex SHA-256 of the canonical JSON of the rest. */
  readonly sha256: string;
}

export class AnalysisPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnalysisPlanError';
  }
}

export const ANALYSIS_METHOD =
  'anytime-valid betting confidence sequence on paired differences b − a (Waudby-Smith & Ramdas, JRSS-B 2024), looked at after every pair';

export function analysisPlanHash(body: AnalysisPlanBody): string {
  const { sha256: _ignored, ...rest } = body as AnalysisPlanBody & { sha256?: string };
  return bytesToHex(sha256(utf8ToBytes(canonicalize(rest)!)));
}

export interface AnalysisPlanOptions {
  readonly metric?: AnalysisMetric;
  readonly alpha?: number;
  readonly margin?: number;
  readonly stoppingRule?: StoppingRule;
}

/** The analysis plan of a session comparing `labels` (exactly two) over `pairs` planned pairs. */
export function buildAnalysisPlan(o: AnalysisPlanOptions, labels: readonly string[], pairs: number): AnalysisPlan {
  if (labels.length !== 2)
    throw new AnalysisPlanError(
      `A pre-registered A/B analysis compares exactly two policies; this plan has ${labels.length}.`,
    );
  const metric = o.metric ?? DEFAULT_ANALYSIS.metric;
  if (!ANALYSIS_METRICS.includes(metric))
    throw new AnalysisPlanError(
      `The analysis metric is one of ${ANALYSIS_METRICS.join(', ')}, not '${String(metric)}'.`,
    );
  const body: AnalysisPlanBody = {
    metric,
    alpha: o.alpha ?? DEFAULT_ANALYSIS.alpha,
    maxPairs: pairs,
    stoppingRule: o.stoppingRule ?? DEFAULT_ANALYSIS.stoppingRule,
    margin: o.margin ?? DEFAULT_ANALYSIS.margin,
    a: labels[0],
    b: labels[1],
    method: ANALYSIS_METHOD,
  };
  checkBody(body);
  return { ...body, sha256: analysisPlanHash(body) };
}

function checkBody(b: AnalysisPlanBody): void {
  try {
    checkAnytimeOptions({ alpha: b.alpha, margin: b.margin, stoppingRule: b.stoppingRule, maxPairs: b.maxPairs });
  } catch (e) {
    const m = (e as Error).message;
    throw new AnalysisPlanError(`${m.startsWith('α') ? m : `${m[0].toUpperCase()}${m.slice(1)}`}.`);
  }
  if (!ANALYSIS_METRICS.includes(b.metric))
    throw new AnalysisPlanError(
      `The analysis metric is one of ${ANALYSIS_METRICS.join(', ')}, not '${String(b.metric)}'.`,
    );
}

/** Checks a parsed plan's analysis part: its fields and its own hash. */
export function checkAnalysisPlan(v: unknown, source: string): AnalysisPlan {
  const p = v as Partial<AnalysisPlan> | null;
  if (
    p === null ||
    typeof p !== 'object' ||
    typeof p.sha256 !== 'string' ||
    typeof p.a !== 'string' ||
    typeof p.b !== 'string' ||
    typeof p.alpha !== 'number' ||
    typeof p.maxPairs !== 'number' ||
    typeof p.margin !== 'number' ||
    !STOPPING_RULES.includes(p.stoppingRule as StoppingRule)
  ) {
    throw new AnalysisPlanError(
      `${source} has an analysis plan tandem cannot read; write it with 'tandem session preregister'.`,
    );
  }
  if (analysisPlanHash(p as AnalysisPlanBody) !== p.sha256)
    throw new AnalysisPlanError(
      `${source}'s analysis plan was changed after it was written; pre-register again with 'tandem session preregister'.`,
    );
  checkBody(p as AnalysisPlanBody);
  return p as AnalysisPlan;
}

/** "task progress, α 0.05, at most 12 pairs, stop on a difference or on none larger than 0.10; analysis 3f2a…". */
export function describeAnalysisPlan(p: AnalysisPlan): string {
  const rule =
    p.stoppingRule === 'difference'
      ? 'stop on a difference'
      : `stop on a difference or on none larger than ${p.margin.toFixed(2)}`;
  return `${p.metric === 'task-progress' ? 'task progress' : 'full success'}, α ${p.alpha}, at most ${p.maxPairs} pairs, ${rule}; analysis ${p.sha256.slice(0, 12)}`;
}

/** A pair's value under the metric: task progress as scored, or 1 for a full success. */
export function metricValue(metric: AnalysisMetric, progress: number): number {
  return metric === 'task-progress' ? progress : progress >= 1 ? 1 : 0;
}
