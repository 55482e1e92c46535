/**
 * The privileged code policies, by the name after `code:` in a policy spec. The rollout's policy
 * registry calls these; they run in the sim only (they read object poses from privileged state).
 */
import type { Policy } from '../contract.js';
import { BottlesPolicy, type BottlesPolicyOptions } from './bottles-policy.js';

export type CodePolicyOptions = BottlesPolicyOptions;

export const codePolicies: Readonly<Record<string, (opts?: CodePolicyOptions) => Policy>> = {
  'bottles-in-the-bin': (opts) => new BottlesPolicy(opts),
};

/** The code policy a spec like `code:bottles-in-the-bin` names, or undefined when there is none. */
export function codePolicyFromSpec(spec: string, opts?: CodePolicyOptions): Policy | undefined {
  if (!spec.startsWith('code:')) return undefined;
  const make = codePolicies[spec.slice('code:'.length)];
  return make ? make(opts) : undefined;
}

export { BottlesPolicy, BOTTLES_POLICY_NAME, parkPose } from './bottles-policy.js';
export { PrivilegedStateRequiredError } from './privileged.js';
