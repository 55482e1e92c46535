/**
 * Compare: real against sim for one policy on one layout set, the paired report, and a recorded
 * real episode replayed beside its sim twin. Policies of blind sessions still running stay out.
 */
import { EpisodeExportError } from '../../record/episode-streams.js';
import type { RolloutRecord } from '../../store/records.js';
import type { JointTrace } from '../api-types.js';
import { compareChoices, compareReport, compareReportQuery, compareView } from '../compare-view.js';
import { ApiRefusal } from '../request-checks.js';
import { parseId, parseLayoutSetSha } from '../request-bodies.js';
import { pickReplayPair, readTrace, replayView } from '../replay-view.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

export function compareRoutes(s: StationContext): Route[] {
  const { store, views } = s;
  const policyView = (id: number): { id: number; name: string; spec: string } => {
    const p = views.policy(id);
    return { id, name: p?.name ?? `policy ${id}`, spec: p?.spec ?? '' };
  };
  return [
    route({
      method: 'GET',
      path: '/api/compare/choices',
      handle: () => {
        const specs = s.blind.specs();
        const blind = (policyId: number): boolean => specs.has(views.policy(policyId)?.spec ?? '');
        return {
          body: compareChoices(
            store.listRollouts().filter((r) => !blind(r.policyId)),
            policyView,
            views.taskOf,
          ),
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/compare/report',
      handle: async ({ url }) => {
        const options = compareReportQuery(url.searchParams, {
          loadLayoutSet: (sha) => store.loadLayoutSet(sha),
          policiesOnSet: (sha) =>
            [...new Set(store.listRollouts({ layoutSetSha256: sha }).map((r) => r.policyId))].sort((a, b) => a - b),
        });
        for (const p of options.policies) s.blind.refuseIfBlind(p);
        return { body: await compareReport((o) => s.reports.build(o), options, views.isCellMarker) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/compare/replay',
      handle: async ({ url }) => {
        const policyId = parseId(url.searchParams.get('policy') ?? '', 'policy');
        s.blind.refuseIfBlind(String(policyId));
        const sha = parseLayoutSetSha(url.searchParams.get('layoutSet') ?? '');
        const layoutText = url.searchParams.get('layout') ?? '';
        const layout = layoutText === '0' ? 0 : parseId(layoutText, 'layout index');
        const { real, sim } = pickReplayPair(store.listRollouts({ policyId, layoutSetSha256: sha }), layout);
        if (!real)
          throw new ApiRefusal(
            404,
            `No real rollout of this policy on layout ${layout} has an episode file to replay; rollouts on the rig are recorded from now on.`,
          );
        const realTrace = await readReplayTrace(real);
        const simTrace = sim ? await readReplayTrace(sim) : null;
        const note = sim
          ? null
          : `No recorded sim rollout of this policy on layout ${layout}: run 'tandem sim sweep --layouts FILE --policy SPEC --record DIR' on this set to get its twin.`;
        return { body: replayView(realTrace, simTrace, note) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/compare',
      handle: ({ url }) => {
        const policyId = parseId(url.searchParams.get('policy') ?? '', 'policy');
        const sha = parseLayoutSetSha(url.searchParams.get('layoutSet') ?? '');
        const set = store.loadLayoutSet(sha);
        if (!set) throw new ApiRefusal(404, `There is no layout set ${sha.slice(0, 12)}… in the store.`);
        if (!views.policy(policyId)) throw new ApiRefusal(404, `There is no policy ${policyId} in the store.`);
        s.blind.refuseIfBlind(String(policyId));
        const rollouts = store.listRollouts({ policyId, layoutSetSha256: sha });
        return {
          body: compareView({
            policy: policyView(policyId),
            layoutSet: { sha256: sha, task: set.task, layouts: set.layouts },
            rollouts,
            isCellMarker: views.isCellMarker,
          }),
        };
      },
    }),
  ];
}

/** A stored rollout's recorded joint states; an episode file gone or unreadable is refused (409) in words. */
async function readReplayTrace(r: RolloutRecord): Promise<JointTrace> {
  try {
    return await readTrace(r);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new ApiRefusal(409, `Rollout ${r.id}'s episode file ${r.episodeFile} is gone from the disk.`);
    if (e instanceof EpisodeExportError)
      throw new ApiRefusal(409, `Rollout ${r.id}'s episode file cannot be replayed: ${e.message}`);
    throw e;
  }
}
