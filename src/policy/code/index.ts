/**
 * The privileged code policies, by the name after `code:` in a policy spec. The rollout's policy
 * registry calls these; they run in the sim only (they read object poses from privileged state).
 */
import type { Policy } from '../contract.js';
import { BottlesPolicy, type BottlesPolicyOptions } from './bottles-policy.js';
import { MugsPolicy } from './mugs-policy.js';
import { SortPolicy } from './sort-policy.js';

export type CodePolicyOptions = BottlesPolicyOptions;

export const codePolicies: Readonly<Record<string, (opts?: CodePolicyOptions) => Policy>> = {
  'bottles-in-the-bin': (opts) => new BottlesPolicy(opts),
  'mug-flipping': (opts) =>
    new MugsPolicy({ actionHorizon: opts?.actionHorizon, motion: opts?.motion, skill: opts?.skill }),
  'sort-from-tote': (opts) =>
    new SortPolicy({ actionHorizon: opts?.actionHorizon, motion: opts?.motion, skill: opts?.skill }),
};

/** A `code:NAME[?skill=S]` spec that names a code policy but asks for something it cannot be. */
export class CodePolicySpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodePolicySpecError';
  }
}

/**
 * `code:NAME`, `code:NAME?skill=S` (a graded variant, S from 0 to 1), `code:NAME?dense-miss=P`
 * (misses crowded bottles with probability P), or both joined by `&` → its name and options;
 * undefined when the spec is not a code spec. Unknown parameters are one sentence.
 */
export function parseCodePolicySpec(spec: string): { name: string; options: CodePolicyOptions } | undefined {
  if (!spec.startsWith('code:')) return undefined;
  const [name, query] = spec.slice('code:'.length).split('?', 2) as [string, string | undefined];
  if (query === undefined) return { name, options: {} };
  const options: { skill?: number; denseMiss?: number } = {};
  for (const part of query.split('&')) {
    const m = /^(skill|dense-miss)=(0(\.\d+)?|1(\.0+)?)$/.exec(part);
    const key = m?.[1] === 'skill' ? 'skill' : 'denseMiss';
    if (!m || options[key] !== undefined)
      throw new CodePolicySpecError(
        `'${spec}' asks for '${part}'; a code policy takes ?skill=S and ?dense-miss=P (each once, from 0 to 1, joined by &; e.g. code:${name}?skill=0.4).`,
      );
    options[key] = Number(m[2]);
  }
  return { name, options };
}

/** The code policy a spec like `code:bottles-in-the-bin` names, or undefined when there is none. */
export function codePolicyFromSpec(spec: string, opts?: CodePolicyOptions): Policy | undefined {
  const parsed = parseCodePolicySpec(spec);
  const make = parsed ? codePolicies[parsed.name] : undefined;
  return make ? make({ ...parsed!.options, ...opts }) : undefined;
}

export { BottlesPolicy, BOTTLES_POLICY_NAME, parkPose } from './bottles-policy.js';
export { MugsPolicy, MUGS_POLICY_NAME, MUGS_POLICY_VERSION } from './mugs-policy.js';
export { SortPolicy, SORT_POLICY_NAME, SORT_POLICY_VERSION } from './sort-policy.js';
export { PrivilegedStateRequiredError } from './privileged.js';
