/**
 * `tandem session plan` and `tandem session preregister`: a hash-pinned session plan fitted to the
 * operator's minutes from the times measured in the store, and its pre-registered A/B analysis —
 * fixed before the first rollout, refused once a rollout of the plan has run.
 */
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  intOption,
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type ParsedCommandArgs,
} from '../command.js';
import { readLayoutSetFile, readUserFile, writeNewFile } from './layouts.js';
import { getTask } from '../../tasks/registry.js';
import { LayoutSetError } from '../../layouts/errors.js';
import { knownPolicySpecs } from '../../rollout/policy-registry.js';
import { type Store } from '../../store/store.js';
import {
  buildSessionPlan,
  DEFAULT_ROLLOUT_COST_S,
  DEFAULT_SESSION_MINUTES,
  parseSessionPlan,
  serializeSessionPlan,
  SessionPlanError,
  rolloutPlanIdentity,
  withAnalysisPlan,
  type SessionPlan,
} from '../../session/plan.js';
import {
  ANALYSIS_METRICS,
  DEFAULT_ANALYSIS,
  describeAnalysisPlan,
  type AnalysisMetric,
  type AnalysisPlanOptions,
} from '../../session/analysis-plan.js';
import { STOPPING_RULES, type StoppingRule } from '../../analysis/anytime-ab.js';
import { JOURNAL } from '../../session/journal-state.js';
import { storePath, withCommandStore } from '../station-store.js';
import { resolveDataDir } from '../data-dir.js';
import { measuredCost } from '../measured-rollout-cost.js';

export function planError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SessionPlanError || e instanceof LayoutSetError) throw new UserError(e.message);
    throw e;
  }
}

const ANALYSIS_OPTIONS = {
  preregister: { type: 'boolean' },
  metric: { type: 'string' },
  alpha: { type: 'string' },
  margin: { type: 'string' },
  'stop-rule': { type: 'string' },
} as const;

const ANALYSIS_HELP = `  --preregister       pre-register the analysis with the defaults below
  --metric M          ${ANALYSIS_METRICS.join(' | ')} (default ${DEFAULT_ANALYSIS.metric}: the task's partial credit per object)
  --alpha A           error level, valid at every look (default ${DEFAULT_ANALYSIS.alpha})
  --margin D          |B − A| within D counts as no difference (default ${DEFAULT_ANALYSIS.margin})
  --stop-rule R       ${STOPPING_RULES.join(' | ')} (default ${DEFAULT_ANALYSIS.stoppingRule})
                      The maximum number of pairs is the plan's (one per layout and repeat).`;

/** The analysis plan options given, or undefined when none is (no analysis plan). */
function analysisOptions(args: ParsedCommandArgs): AnalysisPlanOptions | undefined {
  const v = args.values;
  if (
    v.preregister !== true &&
    v.metric === undefined &&
    v.alpha === undefined &&
    v.margin === undefined &&
    v['stop-rule'] === undefined
  )
    return undefined;
  const metric = v.metric === undefined ? DEFAULT_ANALYSIS.metric : String(v.metric);
  if (!(ANALYSIS_METRICS as readonly string[]).includes(metric))
    throw new UserError(`--metric is one of ${ANALYSIS_METRICS.join(', ')}, not '${metric}'.`);
  const rule = v['stop-rule'] === undefined ? DEFAULT_ANALYSIS.stoppingRule : String(v['stop-rule']);
  if (!(STOPPING_RULES as readonly string[]).includes(rule))
    throw new UserError(`--stop-rule is one of ${STOPPING_RULES.join(', ')}, not '${rule}'.`);
  return {
    metric: metric as AnalysisMetric,
    alpha: numberOption(args, 'alpha', DEFAULT_ANALYSIS.alpha, 0.0001, 0.4999),
    margin: numberOption(args, 'margin', DEFAULT_ANALYSIS.margin, 0.001, 0.999),
    stoppingRule: rule as StoppingRule,
  };
}

/**
 * The refusal for changing a plan's analysis once a rollout of it has run: a session in the store
 * with the same rollouts (the plan's identity without its analysis) that has started one.
 */
export function refuseLateAnalysisChange(store: Store, p: SessionPlan): void {
  const identity = rolloutPlanIdentity(p);
  for (const s of store.listSessions()) {
    const stored = store.getSessionPlan(s.id);
    if (!stored) continue;
    let other: SessionPlan;
    try {
      other = parseSessionPlan(stored.planJson, `session ${s.id}'s plan`);
    } catch {
      continue;
    }
    if (rolloutPlanIdentity(other) !== identity) continue;
    if (!store.listSessionJournal(s.id).some((e) => e.action === JOURNAL.running)) continue;
    throw new UserError(
      `Session ${s.id} has already run rollouts of this plan${other.analysis ? ` under its pre-registered analysis (${describeAnalysisPlan(other.analysis)})` : ' with no analysis plan'}, so its analysis cannot change after the first rollout: plan a new session (another --seed) to analyse it differently.`,
    );
  }
}

export const preregister: CliCommand = {
  path: ['session', 'preregister'],
  summary: "pre-register a two-policy plan's A/B analysis (metric, α, stopping rule) before its first rollout",
  help: `Usage: tandem session preregister --plan FILE [--metric M] [--alpha A] [--margin D] [--stop-rule R] [-o FILE]

Writes the analysis plan into the session plan (the plan's hash then covers it) — how the A/B
comparison will be judged, fixed before any rollout is seen. Refused once a session in the store
(--data) has run a rollout of this plan: the analysis cannot be chosen after seeing data.

  --plan FILE         a two-policy plan written by 'tandem session plan'
${ANALYSIS_HELP}
  -o, --out FILE      write the pre-registered plan here (default: replace --plan FILE)`,
  options: {
    plan: { type: 'string' },
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    ...ANALYSIS_OPTIONS,
  },
  async run(args, io) {
    const file = requireString(args, 'plan');
    const { text } = readUserFile(io, file, 'session plan');
    const p = planError(() => parseSessionPlan(text, file));
    const o = analysisOptions(args) ?? {};
    const dataDir = resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd);
    if (existsSync(storePath(dataDir)))
      await withCommandStore(args.values, io, (store) => refuseLateAnalysisChange(store, p));
    const next = planError(() => withAnalysisPlan(p, o));
    const out = typeof args.values.out === 'string' ? args.values.out : file;
    const written = writeNewFile(io, out, serializeSessionPlan(next), args.values.force === true || out === file);
    io.out(
      `Wrote ${written}: pre-registered analysis: ${describeAnalysisPlan(next.analysis!)}.\nplan ${next.sha256}\n`,
    );
  },
};

export const plan: CliCommand = {
  path: ['session', 'plan'],
  summary: 'plan an evaluation session: layouts × policies, fitted to the time, interleaved, optionally blind',
  help: `Usage: tandem session plan --layouts FILE --policies SPEC,SPEC --per-layout N [--blind] [--minutes M] [--seed S] [--seconds S] -o plan.json

Writes a session plan: every layout of the set (hash-pinned) × every policy × N, in a random but
reproducible order (the seed is stored) that interleaves the policies — each block of consecutive
rollouts runs every policy once on one layout, in a shuffled order — so fatigue and drift favour
none. The plan is fitted to --minutes from the rollout and operator times measured in the store
(--data; defaults before there are three of each: place ${DEFAULT_ROLLOUT_COST_S.placeS} s, rig ${DEFAULT_ROLLOUT_COST_S.rigS} s, score ${DEFAULT_ROLLOUT_COST_S.scoreS} s, reset ${DEFAULT_ROLLOUT_COST_S.resetS} s
besides the episode): fewer rollouts per layout, or fewer layouts, with a note saying so.

  --layouts FILE     layout set written by 'tandem layouts sample'
  --policies LIST    comma-separated policy specs (${knownPolicySpecs().join(' | ')})
  --per-layout N     rollouts of each policy on each layout
  --blind            the operator sees "policy A", "policy B", never specs, until the session ends
                     (the letters are drawn from the seed; the plan file holds the key — keep it from the operator)
  --minutes M        the session's length (default ${DEFAULT_SESSION_MINUTES})
  --seed S           the order's and the letters' seed (default: a fresh random one, stored in the plan,
                     so two sessions of the same policies never share a blind key)
  --seconds S        episode length (default the task's fixed length; shorter only for rehearsals and tests)
  -o, --out FILE     where the plan goes (refuses to replace a file unless --force)

Pre-registering the A/B analysis (two policies; any of these options adds it to the plan, hashed
with it before the first rollout — see 'tandem session preregister' and docs/evaluation.md):
${ANALYSIS_HELP}`,
  options: {
    ...ANALYSIS_OPTIONS,
    layouts: { type: 'string' },
    policies: { type: 'string' },
    'per-layout': { type: 'string' },
    blind: { type: 'boolean' },
    minutes: { type: 'string' },
    seed: { type: 'string' },
    seconds: { type: 'string' },
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
  },
  async run(args, io) {
    const { path, set } = readLayoutSetFile(io, requireString(args, 'layouts'));
    const specs = requireString(args, 'policies').split(',');
    const perLayout = intOption(args, 'per-layout', undefined, 1, 10_000);
    const minutes = numberOption(args, 'minutes', DEFAULT_SESSION_MINUTES, 1, 24 * 60);
    const seed = intOption(args, 'seed', randomInt(0, 2 ** 31 - 1), 0, 2 ** 31 - 1);
    const task = getTask(set.task);
    const episodeSeconds = numberOption(args, 'seconds', task.episodeSeconds, 0.02, 3600);
    const out = requireString(args, 'out');
    const dataDir = resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd);
    // Only a store that exists: planning on a laptop makes no store.
    const measured = existsSync(storePath(dataDir))
      ? await withCommandStore(args.values, io, (s) => measuredCost(s))
      : { cost: DEFAULT_ROLLOUT_COST_S, source: 'defaults' as const };
    const analysis = analysisOptions(args);
    const p = planError(() =>
      buildSessionPlan({
        set,
        specs,
        perLayout,
        blind: args.values.blind === true,
        seed,
        minutes,
        episodeSeconds,
        cost: measured.cost,
        costSource: measured.source,
        layoutSetFile: path,
        ...(analysis ? { analysis } : {}),
      }),
    );
    const written = writeNewFile(io, out, serializeSessionPlan(p), args.values.force === true);
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ plan: written, sha256: p.sha256, rollouts: p.rollouts.length, blind: p.blind, fit: p.fit, policies: p.policies.map((x) => x.label) })}\n`,
      );
      return;
    }
    io.out(
      `Wrote ${written}: ${p.rollouts.length} rollouts (${p.fit.layoutsPlanned} layouts × ${p.policies.length} policies × ${p.fit.perLayout}), about ${p.fit.plannedMinutes} min ` +
        `from ${p.fit.costSource === 'measured' ? 'times measured in the store' : 'default times'}${p.blind ? ', blind (policies shown as ' + p.policies.map((x) => x.label).join(', ') + ')' : ''}.\n` +
        (p.fit.note ? `${p.fit.note}\n` : '') +
        (p.analysis ? `Pre-registered analysis: ${describeAnalysisPlan(p.analysis)}.\n` : '') +
        `plan ${p.sha256}\n`,
    );
  },
};
