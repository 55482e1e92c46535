/**
 * `tandem diagnose`: the failure patterns of one policy on one layout set from the store's task
 * events (sim and real rollouts), ranked per tier with intervals, with the conditions that predict
 * them — and, with --propose-randomization, a randomization spec aimed at the top pattern, stored
 * with its lineage. The analysis lives in src/analysis (pure); this file reads the store and
 * files and turns bad input into one sentence.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { intOption, requireString, UserError, type CliCommand, type CliIo } from '../command.js';
import { readLayoutSetFile, writeNewFile } from './layouts.js';
import { withCommandStore } from '../station-store.js';
import { resolveReportPolicies } from '../../server/report-data.js';
import { ReportInputError } from '../../analysis/paired-report.js';
import {
  diagnoseFailures,
  DiagnosisInputError,
  type DiagnosisRollout,
  type FailureDiagnosis,
} from '../../analysis/failure-diagnosis.js';
import { AGREEMENT_WORDS, renderDiagnosisHtml } from '../../analysis/diagnosis-html.js';
import {
  NothingToProposeError,
  proposeRandomization,
  type RandomizationProposal,
} from '../../analysis/randomization-proposal.js';
import {
  parseRandomizationSpec,
  RandomizationSpecError,
  RANDOMIZATION_FORMAT,
  RANDOMIZATION_KIND,
  type HashedRandomizationSpec,
} from '../../sim/randomization.js';
import { parseObjectOutcomeCounts } from '../../tasks/object-outcomes.js';
import { getTask } from '../../tasks/registry.js';
import type { LayoutSet } from '../../layouts/layout-set.js';
import type { Store } from '../../store/store.js';
import { tandemVersion } from '../version.js';

/** The valid rollouts of the policies a spec names on this layout set, in the diagnosis's terms. */
function diagnosisRollouts(store: Store, spec: string, set: LayoutSet): DiagnosisRollout[] {
  let policies;
  try {
    policies = resolveReportPolicies(store, [spec]);
  } catch (e) {
    if (e instanceof ReportInputError) throw new UserError(e.message);
    throw e;
  }
  const out: DiagnosisRollout[] = [];
  for (const p of policies) {
    for (const r of store.listRollouts({ policyId: Number(p.key), layoutSetSha256: set.sha256, status: 'valid' })) {
      out.push({
        id: r.id,
        kind: r.kind,
        layoutIndex: r.layoutIndex,
        tier: r.tier,
        outcome: r.outcome,
        taskEvents: store.listTaskEvents(r.id),
        endStates: r.latestScore?.endStates ?? null,
        outcomeCounts: r.kind === 'sim' && r.counts ? (parseObjectOutcomeCounts(r.counts) ?? null) : null,
        replay: r.episodeFile ? pathToFileURL(r.episodeFile).href : null,
      });
    }
  }
  return out;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

function summaryText(d: FailureDiagnosis): string {
  const lines = [
    `${d.policy} on ${d.task} (layout set ${d.layoutSet.slice(0, 12)}): ${d.rollouts.sim} sim and ${d.rollouts.real} real rollouts diagnosed.`,
  ];
  lines.push(d.top ? d.top.sentence : 'No failures: every diagnosed rollout did the whole task.');
  for (const t of d.tiers) {
    lines.push(
      `tier ${t.tier} (${t.rollouts.sim} sim, ${t.rollouts.real} real):${t.patterns.length === 0 ? ' no failures' : ''}`,
    );
    t.patterns.forEach((p, i) => {
      const side = (c: typeof p.sim, name: string) => (c && c.of > 0 ? `${name} ${c.rollouts}/${c.of}` : '');
      const ex = p.examples
        .slice(0, 3)
        .map((e) => `#${e.id}`)
        .join(', ');
      lines.push(
        `  ${i + 1}. ${p.words}: ${pct(p.pooled.rate)} of rollouts [${pct(p.pooled.lower)}, ${pct(p.pooled.upper)}] (${[side(p.sim, 'sim'), side(p.real, 'real')].filter(Boolean).join(', ')}; ${AGREEMENT_WORDS[p.agreement]}); e.g. ${ex}`,
      );
    });
  }
  const clear = d.conditions.filter((c) => c.clear);
  lines.push(
    clear.length === 0
      ? 'No start condition clearly predicts failure.'
      : 'Conditions that predict failure (per object):',
  );
  for (const c of clear)
    lines.push(
      `  ${c.words}: ${pct(c.withCondition.rate)} fail vs ${pct(c.without.rate)} (difference ${pct(c.riskDifference)} [${pct(c.lower)}, ${pct(c.upper)}], h = ${c.cohensH.toFixed(2)})`,
    );
  for (const n of d.notes) lines.push(n);
  return `${lines.join('\n')}\n`;
}

/** The proposal in the sim's spec format, checked by the same parser a sweep uses. */
function proposalSpec(p: RandomizationProposal, seed: number, file: string): HashedRandomizationSpec {
  const doc = {
    format: RANDOMIZATION_FORMAT,
    seed,
    ...(Object.keys(p.physics).length > 0 ? { physics: p.physics } : {}),
    ...(p.placement ? { placement: p.placement } : {}),
    visual: p.visual,
    layouts: p.layouts,
    lineage: p.lineage,
  };
  try {
    return parseRandomizationSpec(JSON.stringify(doc), file);
  } catch (e) {
    // The proposal is ours: a refusal here is a bug, not the operator's input.
    if (e instanceof RandomizationSpecError) throw new Error(`The proposed spec does not parse: ${e.message}`);
    throw e;
  }
}

const diagnose: CliCommand = {
  path: ['diagnose'],
  summary:
    "a policy's failure patterns per tier from stored task events, and a randomization spec aimed at the top one",
  help: `Usage: tandem diagnose --policy SPEC --layouts FILE [--json] [-o report.html]
       tandem diagnose --policy SPEC --layouts FILE --propose-randomization -o spec.json [--seed S] [--force] [--json]

From the task events stored with every valid rollout of the policy on the layout set (sim and
real), how its objects failed — knocked off the table, knocked over, dropped in transit, let go
in the target then left it, out of time, never grasped — per tier, ranked by the share of
rollouts with the pattern (95% Wilson interval), each with example rollouts (linked to their
episode files where recorded), and whether the sim reproduces the real frequency. Then the
start conditions that predict an object failing (crowded by a neighbour, lying, far from the
bin, the arm that took it) with the difference in failure rate, its interval and Cohen's h.
See docs/improve.md.

  --policy SPEC              the policy as stored (e.g. code:bottles-in-the-bin?dense-miss=0.8) or its store id
  --layouts FILE             the layout set (hash-verified); only rollouts on it are used
  -o, --output FILE          the HTML report (default: none); with --propose-randomization, the spec file
  --json                     print the diagnosis (and the spec) as JSON
  --propose-randomization    write a randomization spec aimed at the top pattern: its tiers with the
                             layouts that predict it (crowded, lying), the physics it is sensitive
                             to, camera pose and light around it; its lineage (the diagnosis and
                             the rollouts behind it) goes in the spec and the store
  --seed S                   the proposed spec's seed (default 1)
  --force                    replace an existing spec file`,
  options: {
    policy: { type: 'string' },
    layouts: { type: 'string' },
    output: { type: 'string', short: 'o' },
    'propose-randomization': { type: 'boolean' },
    seed: { type: 'string' },
    force: { type: 'boolean' },
  },
  async run(args, io: CliIo) {
    const spec = requireString(args, 'policy');
    const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
    const propose = args.values['propose-randomization'] === true;
    const output = typeof args.values.output === 'string' ? args.values.output : undefined;
    if (propose && output === undefined)
      throw new UserError('--propose-randomization writes a spec file: name it with -o, e.g. -o spec.json.');
    const seed = intOption(args, 'seed', 1, 0, 2 ** 31 - 1);
    return withCommandStore(args.values, io, (store) => {
      let d: FailureDiagnosis;
      try {
        d = diagnoseFailures({
          task: getTask(set.task),
          layoutSet: set,
          policy: spec,
          rollouts: diagnosisRollouts(store, spec, set),
        });
      } catch (e) {
        if (e instanceof DiagnosisInputError) throw new UserError(e.message);
        throw e;
      }
      if (!propose) {
        let html: string | undefined;
        if (output !== undefined) {
          html = resolve(io.cwd, output);
          const v = tandemVersion(io.env);
          try {
            writeFileSync(
              html,
              renderDiagnosisHtml(d, {
                generatedAt: new Date().toISOString(),
                tandemVersion: `${v.version} (${v.commit})`,
              }),
            );
          } catch (e) {
            throw new UserError(`Cannot write the report to ${html}: ${(e as Error).message}.`);
          }
        }
        io.out(
          args.values.json
            ? `${JSON.stringify({ ...d, html: html ?? null }, null, 2)}\n`
            : `${summaryText(d)}${html ? `Wrote ${html}.\n` : ''}`,
        );
        return 0;
      }
      let proposal: RandomizationProposal;
      try {
        proposal = proposeRandomization(d);
      } catch (e) {
        if (e instanceof NothingToProposeError) throw new UserError(e.message, 1);
        throw e;
      }
      const hashed = proposalSpec(proposal, seed, output!);
      const path = writeNewFile(io, output!, `${JSON.stringify(hashed.spec, null, 2)}\n`, args.values.force === true);
      store.putCalibration({
        sha256: hashed.sha256,
        kind: RANDOMIZATION_KIND,
        version: 1,
        canonicalJson: hashed.canonicalJson,
      });
      if (args.values.json)
        io.out(
          `${JSON.stringify({ diagnosis: d, spec: hashed.spec, sha256: hashed.sha256, file: path, rationale: proposal.rationale }, null, 2)}\n`,
        );
      else
        io.out(
          `${summaryText(d)}\nProposed randomization (${path}, sha256 ${hashed.sha256}, stored with its lineage):\n${proposal.rationale.map((r) => `  ${r}`).join('\n')}\nNext: tandem layouts sample --task ${set.task} --per-tier N --seed S --randomize ${output} -o focused.json, then tandem sim sweep --layouts focused.json --randomize ${output}.\n`,
        );
      return 0;
    });
  },
};

export const commands: CliCommand[] = [diagnose];
