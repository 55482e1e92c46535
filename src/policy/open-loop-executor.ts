import { STATE_DIM } from '../rig/contract.js';
import type { ChunkExecutor, EpisodeContext, Observation, Policy, StepAction } from './contract.js';

/**
 * The reference openpi client's behaviour: infer once, execute `rowsPerChunk` rows of the
 * chunk open loop (all of it by default), then infer again. No blending, no prefetch.
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
  };
}
