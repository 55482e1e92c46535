import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  intOption,
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type ParsedCommandArgs,
} from '../command.js';
import { mmrv, pearson, type PolicyPair } from '../../analysis/correlation.js';
import { clopperPearsonInterval, wilsonInterval } from '../../analysis/intervals.js';
import { summarizeLayoutsByTier, type TierSummary } from '../../analysis/tier-summary.js';
import { pairSimReal } from '../../analysis/pairing.js';
import { withCommandStore } from '../station-store.js';
import type { OutcomeCountRow, RolloutFilter, RolloutKind } from '../../store/store.js';
import { EPISODE_OUTCOMES } from '../../rollout/episode.js';

const MIN_POLICIES = 3;

function describe(value: unknown): string {
  if (typeof value === 'string') return `"${value}"`;
  if (value === undefined) return 'nothing';
  return JSON.stringify(value) ?? String(value);
}

/** Reads and checks pairs.json: `[{"policy": "...", "sim": 0.42, "real": 0.38}, ...]`. */
export function readPairsFile(path: string): PolicyPair[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new UserError(
      code === 'ENOENT'
        ? `The pairs file ${path} does not exist.`
        : code === 'EISDIR'
          ? `${path} is a folder, not a pairs file.`
          : `Cannot read the pairs file ${path}: ${(e as Error).message}.`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, '')); // a byte-order mark from a Windows editor is not an error
  } catch (e) {
    throw new UserError(
      `The pairs file ${path} is not valid JSON (${(e as Error).message}); it should be a list like [{"policy": "act", "sim": 0.42, "real": 0.38}, ...].`,
    );
  }
  if (!Array.isArray(doc))
    throw new UserError(
      `The pairs file ${path} should hold a JSON list of {"policy", "sim", "real"} entries, not ${typeof doc === 'object' && doc !== null ? 'an object' : describe(doc)}.`,
    );
  const seen = new Set<string>();
  const pairs = doc.map((entry: unknown, i: number): PolicyPair => {
    const where = `Entry ${i + 1} of ${path}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new UserError(`${where} should be an object {"policy", "sim", "real"}, not ${describe(entry)}.`);
    const { policy, sim, real } = entry as Record<string, unknown>;
    if (typeof policy !== 'string' || policy.trim() === '')
      throw new UserError(`${where} needs a "policy" name (a non-empty string), not ${describe(policy)}.`);
    for (const [field, value] of [
      ['sim', sim],
      ['real', real],
    ] as const) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
        throw new UserError(
          `${where} (policy '${policy}') has ${field} = ${describe(value)}; sim and real must be numbers from 0 to 1.`,
        );
      }
    }
    if (seen.has(policy))
      throw new UserError(`Policy '${policy}' appears more than once in ${path}; give each policy one entry.`);
    seen.add(policy);
    return { policy, sim: sim as number, real: real as number };
  });
  if (pairs.length < MIN_POLICIES) {
    throw new UserError(
      `${path} has ${pairs.length} ${pairs.length === 1 ? 'policy' : 'policies'}; correlating sim with real needs at least ${MIN_POLICIES}.`,
    );
  }
  return pairs;
}

const fmt = (x: number, digits = 3): string => x.toFixed(digits);

const correlate: CliCommand = {
  path: ['stats', 'correlate'],
  summary: 'Pearson r and MMRV between sim and real results of several policies',
  help: `Usage: tandem stats correlate --input pairs.json [--json]

  --input FILE  a JSON list of per-policy results, e.g.
                [{"policy": "act-20k", "sim": 0.42, "real": 0.38}, ...]
                sim and real are mean task progress (or success rate) from 0 to 1;
                at least ${MIN_POLICIES} policies, each named once
  --json        print {"pearson": r, "mmrv": m, "n": policies}; pearson is null when
                sim or real gives every policy the same value

Pearson r: how linearly sim results track real ones (1 = perfectly).
MMRV (mean maximum rank violation, as SIMPLER defines it): for each policy, the largest
real-progress gap to a policy that sim orders the other way; averaged. 0 = sim ranks the
policies exactly as the real rig does.`,
  options: { input: { type: 'string', short: 'i' } },
  async run(args, io) {
    const path = resolve(io.cwd, requireString(args, 'input'));
    const pairs = readPairsFile(path);
    const r = pearson(pairs);
    const m = mmrv(pairs);
    if (args.values.json) {
      io.out(`${JSON.stringify({ pearson: r.r, mmrv: m, n: pairs.length })}\n`);
      return 0;
    }
    io.out(
      [
        `Sim–real agreement over ${pairs.length} policies`,
        `  Pearson r  ${r.r === null ? `undefined: ${r.undefinedBecause}` : fmt(r.r)}`,
        `  MMRV       ${fmt(m)}  (0 = sim ranks the policies exactly as the real rig does)`,
        '',
      ].join('\n'),
    );
    return 0;
  },
};

const interval: CliCommand = {
  path: ['stats', 'interval'],
  summary: 'Wilson and Clopper–Pearson intervals for k successes in n trials',
  help: `Usage: tandem stats interval --successes K --trials N [--confidence 0.95] [--json]

  --successes K    successful rollouts (0..N)
  --trials N       rollouts run
  --confidence C   two-sided level, default 0.95
  --json           print {"successes", "trials", "estimate", "confidence",
                   "wilson": {"lower", "upper"}, "clopperPearson": {"lower", "upper"}}

Wilson is the everyday interval for small N; Clopper–Pearson is exact and conservative
(it covers at least the stated level, so it is wider).`,
  options: {
    successes: { type: 'string', short: 'k' },
    trials: { type: 'string', short: 'n' },
    confidence: { type: 'string' },
  },
  async run(args, io) {
    const trials = intOption(args, 'trials', undefined, 1, 1_000_000_000);
    const successes = intOption(args, 'successes', undefined, 0, 1_000_000_000);
    if (successes > trials) throw new UserError(`--successes (${successes}) cannot exceed --trials (${trials}).`);
    const confidence = numberOption(args, 'confidence', 0.95, 0.5, 0.9999);
    const w = wilsonInterval(successes, trials, { confidence });
    const cp = clopperPearsonInterval(successes, trials, { confidence });
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ successes, trials, estimate: w.estimate, confidence, wilson: { lower: w.lower, upper: w.upper }, clopperPearson: { lower: cp.lower, upper: cp.upper } })}\n`,
      );
      return 0;
    }
    const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
    io.out(
      [
        `${successes} of ${trials} succeeded (${pct(w.estimate)}); ${Math.round(confidence * 1000) / 10}% intervals:`,
        `  Wilson          [${fmt(w.lower)}, ${fmt(w.upper)}]`,
        `  Clopper–Pearson [${fmt(cp.lower)}, ${fmt(cp.upper)}]`,
        '',
      ].join('\n'),
    );
    return 0;
  },
};

function kindOption(args: ParsedCommandArgs): RolloutKind | undefined {
  const v = args.values.kind;
  if (v === undefined) return undefined;
  if (v === 'sim' || v === 'real') return v;
  throw new UserError(`--kind must be 'sim' or 'real', not '${String(v)}'.`);
}

interface PolicySummary {
  readonly policyId: number;
  readonly policy: string;
  readonly kind: RolloutKind;
  readonly unscored: number;
  /** Valid rollouts the policy's own error ended early: inside the numbers, scored as they stood. */
  readonly policyErrors: number;
  readonly invalid: number;
  readonly aborted: number;
  /** invalid + aborted: left out of the numbers. */
  readonly excluded: number;
  /** Rollouts per outcome code ("unrecorded" for invalid/aborted rows stored before outcomes were). */
  readonly outcomes: Record<string, number>;
  readonly tiers: (TierSummary & { readonly policyErrors: number })[];
}

/** "3 invalid (rig fault 2, cameras failed 1)": a status's count with its outcomes spelled out. */
function breakdown(status: 'invalid' | 'aborted', rows: readonly OutcomeCountRow[]): string | undefined {
  const mine = rows.filter((r) => r.status === status);
  const total = mine.reduce((n, r) => n + r.rollouts, 0);
  if (total === 0) return undefined;
  const parts = mine.map(
    (r) => `${r.outcome === null ? 'no outcome recorded' : EPISODE_OUTCOMES[r.outcome].label} ${r.rollouts}`,
  );
  return `${total} ${status} (${parts.join(', ')})`;
}

const summary: CliCommand = {
  path: ['stats', 'summary'],
  summary: 'Per-tier task progress and success intervals for the rollouts in the store',
  help: `Usage: tandem stats summary [--policy NAME] [--kind sim|real] [--layout-set SHA256]
                            [--session ID] [--seed S] [--json]

Reads the store in the data directory and prints, per policy and per sim/real, for each tier
and for all tiers pooled: rollouts, layouts, mean task progress with a 95% bootstrap interval
over layouts (seeded, default seed 1), and full successes with Wilson and Clopper–Pearson
intervals. Only valid rollouts count; a real rollout's progress is its operator's latest score.

  --policy NAME      only this policy (its name or numeric id)
  --kind sim|real    only sim or only real rollouts
  --layout-set SHA   only rollouts on this layout set
  --session ID       only rollouts of this session
  --seed S           bootstrap seed (default 1)`,
  options: {
    policy: { type: 'string' },
    kind: { type: 'string' },
    'layout-set': { type: 'string' },
    session: { type: 'string' },
    seed: { type: 'string' },
  },
  async run(args, io) {
    const kind = kindOption(args);
    const seed = intOption(args, 'seed', 1, 0, Number.MAX_SAFE_INTEGER - 1000);
    const sessionId =
      args.values.session === undefined ? undefined : intOption(args, 'session', undefined, 1, Number.MAX_SAFE_INTEGER);
    const layoutSet = args.values['layout-set'];
    if (layoutSet !== undefined && !/^[0-9a-f]{64}$/.test(String(layoutSet)))
      throw new UserError(`--layout-set must be a layout set's 64-character hex SHA-256, not '${String(layoutSet)}'.`);
    const breakdowns = new Map<number, string[]>();
    const summaries = await withCommandStore(args.values, io, (store) => {
      const policies = store.listPolicies();
      const wanted = args.values.policy;
      const chosen =
        wanted === undefined ? policies : policies.filter((p) => p.name === wanted || String(p.id) === wanted);
      if (wanted !== undefined && chosen.length === 0) {
        throw new UserError(
          `There is no policy '${String(wanted)}' in the store ${store.file}. Known: ${policies.map((p) => p.name).join(', ') || 'none yet'}.`,
        );
      }
      const out: PolicySummary[] = [];
      for (const p of chosen) {
        for (const k of kind ? [kind] : (['sim', 'real'] as const)) {
          const filter: RolloutFilter = {
            policyId: p.id,
            kind: k,
            layoutSetSha256: layoutSet as string | undefined,
            sessionId,
          };
          const rows = store.layoutOutcomes(filter);
          if (rows.length === 0) continue;
          const scored = rows.filter((r) => r.scored > 0);
          const outcomeRows = store.outcomeCounts(filter);
          const sum = (f: (r: (typeof rows)[number]) => number, tier?: number): number =>
            rows.filter((r) => tier === undefined || r.tier === tier).reduce((n, r) => n + f(r), 0);
          const tiers = summarizeLayoutsByTier(
            scored.map((r) => ({
              tier: r.tier,
              rollouts: r.scored,
              meanProgress: Math.min(1, r.progressSum / r.scored),
              successes: r.fullSuccesses,
            })),
            { seed },
          );
          out.push({
            policyId: p.id,
            policy: chosen.filter((q) => q.name === p.name).length > 1 ? `${p.name} #${p.id}` : p.name,
            kind: k,
            unscored: sum((r) => r.unscored),
            policyErrors: sum((r) => r.policyErrors),
            invalid: sum((r) => r.invalid),
            aborted: sum((r) => r.aborted),
            excluded: sum((r) => r.excluded),
            outcomes: Object.fromEntries(outcomeRows.map((r) => [r.outcome ?? `${r.status}, unrecorded`, r.rollouts])),
            tiers: tiers.map((t) => ({
              ...t,
              policyErrors: sum((r) => r.policyErrors, t.tier === 'all' ? undefined : t.tier),
            })),
          });
          breakdowns.set(
            out.length - 1,
            [breakdown('invalid', outcomeRows), breakdown('aborted', outcomeRows)].filter(
              (x): x is string => x !== undefined,
            ),
          );
        }
      }
      return out;
    });
    if (args.values.json) {
      io.out(`${JSON.stringify(summaries, null, 2)}\n`);
      return 0;
    }
    if (summaries.length === 0) {
      io.out('No rollouts match in the store yet.\n');
      return 0;
    }
    const lines: string[] = [];
    const row = (cells: string[]): string =>
      `  ${cells[0].padEnd(4)}  ${cells[1].padStart(8)}  ${cells[2].padStart(7)}  ${cells[3].padStart(8)}  ${cells[4].padEnd(16)}  ${cells[5].padStart(9)}  ${cells[6].padEnd(16)}  ${cells[7].padEnd(19)}  ${cells[8].padStart(13)}`;
    const range = (i: { lower: number; upper: number }): string => `[${fmt(i.lower)}, ${fmt(i.upper)}]`;
    let repeats = false;
    summaries.forEach((s, i) => {
      const notes = [
        ...(s.policyErrors
          ? [`${s.policyErrors} ended by the policy's own error (counted, scored as they stood)`]
          : []),
        ...(breakdowns.get(i) ?? []).map((b, j) => (j === 0 ? `left out ${b}` : b)),
        ...(s.unscored ? [`${s.unscored} not scored yet`] : []),
      ];
      lines.push(`${s.policy} (${s.kind})${notes.length ? `: ${notes.join('; ')}` : ''}`);
      lines.push(
        row([
          'tier',
          'rollouts',
          'layouts',
          'progress',
          '95% bootstrap',
          'successes',
          'Wilson 95%',
          'Clopper–Pearson 95%',
          'policy errors',
        ]),
      );
      for (const t of s.tiers) {
        repeats ||= t.layouts < t.rollouts;
        lines.push(
          row([
            String(t.tier),
            String(t.rollouts),
            String(t.layouts),
            fmt(t.meanProgress),
            range(t.progressInterval),
            `${t.successes}/${t.rollouts}`,
            range(t.successWilson),
            range(t.successClopperPearson),
            String(t.policyErrors),
          ]),
        );
      }
      lines.push('');
    });
    if (repeats) {
      lines.push(
        'Layouts were repeated: Wilson and Clopper–Pearson count every rollout as independent, so they are too narrow here;',
      );
      lines.push(
        'the bootstrap resamples layouts (--json also gives successRateInterval, bootstrapped over layouts).',
        '',
      );
    }
    io.out(`${lines.join('\n')}`);
    return 0;
  },
};

const pairs: CliCommand = {
  path: ['stats', 'pairs'],
  summary: 'Per-policy sim and real mean progress from the store, as a pairs file for correlate',
  help: `Usage: tandem stats pairs [--layout-set SHA256] [-o pairs.json] [--all-layouts]

For every policy with valid, scored rollouts both in sim and on the real rig, prints (or writes
to -o FILE) one entry {"policy", "sim", "real", "simLayouts", "realLayouts"}: mean task progress over layouts, each
layout weighted once, its sim repeats and real rollouts averaged first.

By default only layouts that have both sim and real results count, so the two numbers describe
the same initial conditions; --all-layouts uses every layout each side has.

  --layout-set SHA   only rollouts on this layout set
  -o, --output FILE  write the pairs file instead of printing it
  --all-layouts      do not restrict to layouts run in both sim and real

Then: tandem stats correlate --input pairs.json`,
  options: {
    'layout-set': { type: 'string' },
    output: { type: 'string', short: 'o' },
    'all-layouts': { type: 'boolean' },
  },
  async run(args, io) {
    const layoutSet = args.values['layout-set'];
    if (layoutSet !== undefined && !/^[0-9a-f]{64}$/.test(String(layoutSet)))
      throw new UserError(`--layout-set must be a layout set's 64-character hex SHA-256, not '${String(layoutSet)}'.`);
    const allLayouts = args.values['all-layouts'] === true;
    const { pairs: entries, unpaired: oneSided } = await withCommandStore(args.values, io, (store) => {
      // Two checkpoints may share a name (retrained under the same name): then the id tells them apart.
      const policies = store.listPolicies();
      const nameCount = new Map<string, number>();
      for (const p of policies) nameCount.set(p.name, (nameCount.get(p.name) ?? 0) + 1);
      const names = new Map(policies.map((p) => [p.id, nameCount.get(p.name)! > 1 ? `${p.name} #${p.id}` : p.name]));
      const rows = store
        .layoutOutcomes({ layoutSetSha256: layoutSet as string | undefined, status: 'valid' })
        .filter((r) => r.scored > 0);
      return pairSimReal(
        rows.map((r) => ({
          policy: names.get(r.policyId) ?? `policy ${r.policyId}`,
          kind: r.kind,
          layout: `${r.layoutSetSha256}:${r.layoutIndex}`,
          meanProgress: Math.min(1, r.progressSum / r.scored),
        })),
        { sharedLayoutsOnly: !allLayouts },
      );
    });
    const text = `${JSON.stringify(entries, null, 2)}\n`;
    if (typeof args.values.output === 'string') {
      const out = resolve(io.cwd, args.values.output);
      try {
        writeFileSync(out, text);
      } catch (e) {
        throw new UserError(`Cannot write ${out}: ${(e as Error).message}.`);
      }
      io.err(`Wrote ${entries.length} ${entries.length === 1 ? 'policy' : 'policies'} to ${out}.\n`);
    } else {
      io.out(text);
    }
    if (oneSided.length > 0) {
      io.err(
        `Left out (results ${allLayouts ? 'only in sim or only on the real rig' : 'on no layout run in both sim and real'}): ${oneSided.join(', ')}.\n`,
      );
    }
    return 0;
  },
};

export const commands: CliCommand[] = [correlate, interval, summary, pairs];
