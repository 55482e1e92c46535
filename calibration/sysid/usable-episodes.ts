/** The episodes a fit or a check may replay, and the others with the reason each is left out. */
import type { RigModel } from '../../src/rig/contract.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import { readEpisodeTrajectory, type EpisodeTrajectory } from './episode-trajectory.js';
import { SysidError } from './sysid-error.js';

export async function readUsable(
  files: readonly string[],
  model: RigModel,
  layoutSets: readonly LayoutSet[] = [],
): Promise<{ usable: EpisodeTrajectory[]; excluded: { file: string; reason: string }[] }> {
  if (files.length === 0)
    throw new SysidError('Give the episode files to fit on (MCAP takes recorded with `tandem teleop record`).');
  const usable: EpisodeTrajectory[] = [];
  const excluded: { file: string; reason: string }[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const t = await readEpisodeTrajectory(f, model, { layoutSets });
    const dup = seen.get(t.sha256);
    if (dup !== undefined) {
      excluded.push({
        file: f,
        reason: `${f.split('/').pop()} is the same recording as ${dup.split('/').pop()} (same SHA-256): counted once.`,
      });
      continue;
    }
    seen.set(t.sha256, f);
    if (t.exclusion) excluded.push({ file: f, reason: t.exclusion });
    else usable.push(t);
  }
  return { usable, excluded };
}
