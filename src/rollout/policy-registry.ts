/**
 * Policy specs → policies, by scheme: `code:NAME` (privileged code policies and `code:hold`),
 * `onnx:path` and `ws://host:port` / `wss://` (the policy runtime). One place, so the CLI, sweeps
 * and sessions accept the same specs and an unknown one gets the same sentence everywhere.
 */
import type { Policy } from '../policy/contract.js';
import {
  CodePolicySpecError,
  codePolicies,
  parseCodePolicySpec,
  type CodePolicyOptions,
} from '../policy/code/index.js';
import { isRuntimePolicySpec, openPolicySpec, type PolicySpecOptions } from '../policy/spec.js';
import { HOLD_POLICY_NAME, HoldPolicy } from './hold-policy.js';
import { ThreadedPolicy, type ThreadedPolicyOptions } from './threaded-policy.js';

/** A spec that names no policy tandem knows: one sentence listing what it does know. */
export class PolicySpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicySpecError';
  }
}

/** Code policies by the name after `code:`. */
function codePolicyNames(): string[] {
  return ['hold', ...Object.keys(codePolicies)];
}

/** The specs this registry accepts, for help texts and error messages. */
export function knownPolicySpecs(): string[] {
  return [
    ...codePolicyNames().map((n) => `code:${n}`),
    'code:NAME?skill=0.4 (a graded variant)',
    'code:bottles-in-the-bin?dense-miss=0.8 (misses crowded bottles)',
    'onnx:path/to/model.onnx',
    'ws://host:port',
  ];
}

/**
 * Opens the policy a spec names; throws PolicySpecError for an unknown spec. A planning code
 * policy runs in a worker thread (ThreadedPolicy), wherever it runs — sim, sweep or rig — so the
 * rollout loop's thread never plans: one wrapper on every path, and the sim proves it. `warmUp`
 * (wall-clock rigs) see ThreadedPolicyOptions.
 */
export async function openPolicy(
  spec: string,
  opts: PolicySpecOptions & Pick<ThreadedPolicyOptions, 'warmUp'>,
): Promise<Policy> {
  if (codePolicyOf(spec) !== undefined) return ThreadedPolicy.open(spec, { cwd: opts.cwd, warmUp: opts.warmUp });
  return openPolicyHere(spec, opts);
}

/** The code policy a `code:NAME[?…]` spec plans with (not code:hold), parsed; undefined for other specs. Unknown names and parameters are one sentence. */
function codePolicyOf(spec: string): { name: string; options: CodePolicyOptions } | undefined {
  if (!spec.startsWith('code:') || spec === HOLD_POLICY_NAME) return undefined;
  let parsed;
  try {
    parsed = parseCodePolicySpec(spec)!;
  } catch (e) {
    if (e instanceof CodePolicySpecError) throw new PolicySpecError(e.message);
    throw e;
  }
  if (!codePolicies[parsed.name]) throw unknown(spec);
  if (parsed.options.denseMiss !== undefined && parsed.name !== 'bottles-in-the-bin')
    throw new PolicySpecError(`'${spec}': only code:bottles-in-the-bin has a dense-miss variant.`);
  return parsed;
}

/** Opens the policy a spec names in this thread (the policy worker's own side; openPolicy for everyone else). */
export async function openPolicyHere(spec: string, opts: PolicySpecOptions): Promise<Policy> {
  if (spec === HOLD_POLICY_NAME) return new HoldPolicy();
  const code = codePolicyOf(spec);
  if (code !== undefined) return codePolicies[code.name](code.options);
  if (isRuntimePolicySpec(spec)) return openPolicySpec(spec, opts);
  throw unknown(spec);
}

function unknown(spec: string): PolicySpecError {
  return new PolicySpecError(`Unknown policy '${spec}'; known policies: ${knownPolicySpecs().join(', ')}.`);
}
