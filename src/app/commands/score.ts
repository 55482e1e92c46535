/** `tandem score`: task progress of one layout from per-object end states (sim or operator). */
import {
  intOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import { layoutAt } from '../../layouts/layout-set.js';
import { getTask } from '../../tasks/registry.js';
import type { ObjectEndState } from '../../tasks/types.js';
import { asUserError, readLayoutSetFile, readUserFile } from './layouts.js';
import { withCommandStore } from '../station-store.js';
import { RolloutScoreRefusal, scoreStoredRollout, type RolloutScored } from '../../session/rollout-score.js';

/** End states as a list, or {"objects": [...]}; anything else is one sentence. */
function parseEndStates(text: string, file: string): ObjectEndState[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file} is not valid JSON (${(e as Error).message}); the file may be truncated or damaged.`);
  }
  const list = Array.isArray(v)
    ? v
    : v !== null && typeof v === 'object' && Array.isArray((v as { objects?: unknown }).objects)
      ? (v as { objects: unknown[] }).objects
      : undefined;
  if (!list)
    throw new UserError(
      `${file} is not an end state: expected a list like [{"id": "bottle-1", "region": "bin"}] or {"objects": [...]}.`,
    );
  return list as ObjectEndState[];
}

const score: CliCommand = {
  path: ['score'],
  summary: 'task progress of one layout from per-object end states',
  help: `Usage: tandem score --layout-set FILE --layout I --end-state FILE [--json]
       tandem score --rollout ID --end-state FILE [--reason TEXT] [--operator NAME] [--json]

Scores how far an episode got, exactly as the reference lab defines task progress:
  bottles-in-the-bin  bottles in the bin ÷ bottles in the layout
  sort-from-tote      parts in their correct sorter slot ÷ all parts
  mug-flipping        (mugs upright now that were not − upright mugs knocked over)
                      ÷ mugs not upright at the start, floored at 0

The end-state file lists every object of the layout once:
  [{"id": "bottle-1", "region": "bin"}, {"id": "bottle-2"}]          (no region = anywhere else)
  [{"id": "mug-1", "upright": true}, {"id": "mug-2", "upright": false}]
  [{"id": "nut-3", "region": "slot:nut"}, {"id": "bolt-1", "region": "tote"}]
or {"objects": [...]} around the same list.

  --layout-set FILE  a layout set (its hash is verified)
  --layout I         layout index (0-based)
  --end-state FILE   the end states
  --rollout ID       score a stored rig rollout (its layout from the store) and keep the score in the
                     store (--data) as the operator's: one score per rollout; a second one needs
                     --reason, and the earlier score is kept beside it
  --reason TEXT      why a scored rollout is scored again
  --operator NAME    who scored it (default $USER)
  --json             print {"task", "layoutSet", "version", "layout", "tier", "progress", "counts", "summary"}
                     (with --rollout also "rollout", "scoreId", "rescored")`,
  options: {
    'layout-set': { type: 'string' },
    layout: { type: 'string' },
    'end-state': { type: 'string' },
    rollout: { type: 'string' },
    reason: { type: 'string' },
    operator: { type: 'string' },
  },
  async run(args, io) {
    if (args.values.rollout !== undefined) return scoreRollout(args, io);
    const { set } = readLayoutSetFile(io, requireString(args, 'layout-set'));
    const index = intOption(args, 'layout', undefined, 0, Number.MAX_SAFE_INTEGER);
    const endFile = requireString(args, 'end-state');
    const layout = asUserError(() => layoutAt(set, index));
    const { text } = readUserFile(io, endFile, 'end-state');
    const endStates = parseEndStates(text, endFile);
    const task = getTask(set.task);
    const progress = asUserError(() => task.scoreProgress(layout, endStates));
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ task: task.id, layoutSet: set.sha256, version: set.version, layout: index, tier: layout.tier, progress: progress.progress, counts: progress.counts, summary: progress.summary })}\n`,
      );
    } else {
      const counts = Object.entries(progress.counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      io.out(
        `${task.id} layout ${index} (tier ${layout.tier}) of set v${set.version} ${set.sha256.slice(0, 12)}\n${progress.summary}\nprogress ${progress.progress.toFixed(3)}\ncounts   ${counts}\n`,
      );
    }
  },
};

/** `tandem score --rollout ID`: the operator's score of one stored rig rollout, kept in the store. */
async function scoreRollout(args: ParsedCommandArgs, io: CliIo): Promise<number> {
  if (args.values['layout-set'] !== undefined || args.values.layout !== undefined)
    throw new UserError('--rollout takes its layout from the store; leave out --layout-set and --layout.');
  const id = intOption(args, 'rollout', undefined, 1, Number.MAX_SAFE_INTEGER);
  const endFile = requireString(args, 'end-state');
  const reason = typeof args.values.reason === 'string' ? args.values.reason : undefined;
  const operator = typeof args.values.operator === 'string' ? args.values.operator : (io.env.USER ?? null);
  const { text } = readUserFile(io, endFile, 'end-state');
  const endStates = parseEndStates(text, endFile);
  return withCommandStore(args.values, io, (store) => {
    let s: RolloutScored;
    try {
      s = scoreStoredRollout(store, {
        rolloutId: id,
        endStates,
        ...(reason !== undefined ? { reason } : {}),
        operator,
      });
    } catch (e) {
      if (e instanceof RolloutScoreRefusal)
        throw new UserError(e.message.replace('say why with a reason', 'say why with --reason "…"'));
      throw e;
    }
    if (args.values.json)
      io.out(
        `${JSON.stringify({ rollout: s.rolloutId, scoreId: s.scoreId, rescored: s.rescored, rehearsal: s.rehearsal, task: s.task, layoutSet: s.layoutSet, version: s.version, layout: s.layout, tier: s.tier, progress: s.progress, counts: s.counts, summary: s.summary })}\n`,
      );
    else
      io.out(
        `Rollout ${id} (${s.task} layout ${s.layout}, tier ${s.tier}) ${s.rescored ? 're-scored' : 'scored'} ${s.progress.toFixed(3)}: ${s.summary}${s.rehearsal ? ' (a rehearsal, not a result)' : ''}\n`,
      );
    return 0;
  });
}

export const commands: CliCommand[] = [score];
