import { STATE_DIM } from '../rig/contract.js';
import type { ChunkExecutor, EpisodeContext, Observation, Policy, StepAction } from './contract.js';
import { validateActionChunk } from './actions.js';

/**
 * The reference openpi client's behaviour: infer once, execute `rowsPerChunk` rows of the
 * chunk open loop (all of it by default), then infer again. No blending, no prefetch.
 * Chunks are checked (InvalidActionError) before any row of them is executed.
 */
export function createOpenLoopExecutor(policy: Policy, opts: { rowsPerChunk?: number } = {}): ChunkExecutor {
  let chunk: Float32Array | undefined;
  let rows = 0;
  let row = 0;
  let chunkIndex = -1;
  return {
    async reset(ctx: EpisodeContext) {
      chunk = undefined;
      rows = 0;
      row = 0;
      chunkIndex = -1;
      await policy.reset(ctx);
    },
    async step(_stepIndex: number, _tS: number, observe: () => Promise<Observation>): Promise<StepAction> {
      if (chunk === undefined || row >= rows) {
        const result = await policy.infer(await observe());
        // The same check the real rig's chunk executor makes: a chunk of the wrong length or with
        // a NaN is the policy's own error before any of its rows runs (ChunkExecutor contract).
        validateActionChunk(result, policy.info.name);
        chunk = result.actions;
        rows = Math.min(result.horizon, opts.rowsPerChunk ?? result.horizon);
        row = 0;
        chunkIndex += 1;
      }
      const position = chunk.subarray(row * STATE_DIM, (row + 1) * STATE_DIM);
      const action: StepAction = { position, chunkIndex, row };
      row += 1;
      return action;
    },
    replanNow() {
      chunk = undefined;
    },
  };
}
