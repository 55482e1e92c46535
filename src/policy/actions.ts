/** Checks on what a policy answers, before any row reaches the rig. */
import { STATE_DIM } from '../rig/contract.js';
import type { ActionChunk } from './contract.js';

/**
 * The policy answered numbers that cannot drive a rig (NaN, infinity, wrong length).
 * This is the policy's own fault, unlike PolicyUnavailableError: see the ChunkExecutor contract.
 */
export class InvalidActionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidActionError';
  }
}

/** Throws InvalidActionError naming the first bad row/entry; `source` names the policy. */
export function validateActionChunk(chunk: ActionChunk, source: string): void {
  if (!Number.isInteger(chunk.horizon) || chunk.horizon < 1) {
    throw new InvalidActionError(
      `Policy ${source} answered an action chunk with horizon ${String(chunk.horizon)}; it must have at least one row.`,
    );
  }
  if (chunk.actions.length !== chunk.horizon * STATE_DIM) {
    throw new InvalidActionError(
      `Policy ${source} answered ${chunk.actions.length} action values for horizon ${chunk.horizon}; expected ${chunk.horizon}×${STATE_DIM}.`,
    );
  }
  for (let i = 0; i < chunk.actions.length; i++) {
    const v = chunk.actions[i];
    if (!Number.isFinite(v)) {
      const row = Math.floor(i / STATE_DIM);
      throw new InvalidActionError(
        `Policy ${source} answered ${String(v)} at action row ${row}, entry ${i % STATE_DIM}; no row of that chunk is executed.`,
      );
    }
  }
}
