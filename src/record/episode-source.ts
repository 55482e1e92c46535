/** The data sources a dataset's episodes come from. */
export const EPISODE_SOURCES = ['sim-privileged', 'sim-policy', 'real-teleop', 'real-policy'] as const;
export type EpisodeSource = (typeof EPISODE_SOURCES)[number];

/**
 * An episode's source from its file's metadata: its own `source` when it names one, else a
 * teleop take is real-teleop, a sim rollout of a privileged code policy sim-privileged, any
 * other sim rollout sim-policy, a rollout on the rig real-policy.
 */
export function episodeSource(metadata: Readonly<Record<string, string>>): EpisodeSource {
  const own = metadata.source as EpisodeSource | undefined;
  if (own && EPISODE_SOURCES.includes(own)) return own;
  if (metadata.kind === 'teleop') return 'real-teleop';
  if (metadata.kind === 'sim')
    return (metadata.policy_spec ?? '').startsWith('code:') ? 'sim-privileged' : 'sim-policy';
  return 'real-policy';
}
