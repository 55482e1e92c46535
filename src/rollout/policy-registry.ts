/**
 * Policy specs → policies, by scheme: `code:NAME` (privileged code policies and `code:hold`),
 * `onnx:path` and `ws://host:port` / `wss://` (the policy runtime). One place, so the CLI, sweeps
 * and sessions accept the same specs and an unknown one gets the same sentence everywhere.
 */
import type { Policy } from '../policy/contract.js';
import { CodePolicySpecError, codePolicies, parseCodePolicySpec } from '../policy/code/index.js';
import { isRuntimePolicySpec, openPolicySpec, type PolicySpecOptions } from '../policy/spec.js';
import { HOLD_POLICY_NAME, HoldPolicy } from './hold-policy.js';

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
  return [...codePolicyNames().map((n) => `code:${n}`), 'code:NAME?skill=0.4 (a graded variant)', 'onnx:path/to/model.onnx', 'ws://host:port'];
}

/** True when the spec runs only in the sim (reads privileged state). */
export function isCodePolicySpec(spec: string): boolean {
  return spec.startsWith('code:');
}

/** Opens the policy a spec names; throws PolicySpecError for an unknown spec. */
export async function openPolicy(spec: string, opts: PolicySpecOptions): Promise<Policy> {
  if (spec.startsWith('code:')) {
    if (spec === HOLD_POLICY_NAME) return new HoldPolicy();
    let parsed;
    try {
      parsed = parseCodePolicySpec(spec)!;
    } catch (e) {
      if (e instanceof CodePolicySpecError) throw new PolicySpecError(e.message);
      throw e;
    }
    const make = codePolicies[parsed.name];
    if (make) return make(parsed.options);
    throw unknown(spec);
  }
  if (isRuntimePolicySpec(spec)) return openPolicySpec(spec, opts);
  throw unknown(spec);
}

function unknown(spec: string): PolicySpecError {
  return new PolicySpecError(`Unknown policy '${spec}'; known policies: ${knownPolicySpecs().join(', ')}.`);
}
