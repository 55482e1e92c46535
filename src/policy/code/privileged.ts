/** What every code policy shares: the refusal to run without privileged state, and its version hash. */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** A code policy run where object poses are not available (the real rig, or a sim without privileged state). */
export class PrivilegedStateRequiredError extends Error {
  constructor(policyName: string) {
    super(
      `${policyName} cannot run here: code policies read object poses the real rig cannot see; run them in the sim, or rehearse on the emulated cell (rig type yam-cell).`,
    );
    this.name = 'PrivilegedStateRequiredError';
  }
}

/** The "checkpoint" of a code policy: SHA-256 of its name and behaviour version. */
export function codePolicySha256(name: string, version: number): string {
  return bytesToHex(sha256(utf8ToBytes(`${name}@${version}`)));
}
