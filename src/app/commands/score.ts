/** `tandem score`: task progress of one layout from per-object end states (sim or operator). */
import { intOption, requireString, UserError, type CliCommand } from '../command.js';
import { layoutAt } from '../../layouts/layout-set.js';
import { getTask } from '../../tasks/registry.js';
import type { ObjectEndState } from '../../tasks/types.js';
import { asUserError, readLayoutSetFile, readUserFile } from './layouts.js';

/** End states as a list, or {"objects": [...]}; anything else is one sentence. */
function parseEndStates(text: string, file: string): ObjectEndState[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file} is not valid JSON (${(e as Error).message}); the file may be truncated or damaged.`);
  }
  const list = Array.isArray(v) ? v : v !== null && typeof v === 'object' && Array.isArray((v as { objects?: unknown }).objects) ? (v as { objects: unknown[] }).objects : undefined;
  if (!list) throw new UserError(`${file} is not an end state: expected a list like [{"id": "bottle-1", "region": "bin"}] or {"objects": [...]}.`);
  return list as ObjectEndState[];
}

const score: CliCommand = {
  path: ['score'],
  summary: 'task progress of one layout from per-object end states',
  help: `Usage: tandem score --layout-set FILE --layout I --end-state FILE [--json]

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
  --json             print {"task", "layoutSet", "version", "layout", "tier", "progress", "counts", "summary"}`,
  options: { 'layout-set': { type: 'string' }, layout: { type: 'string' }, 'end-state': { type: 'string' } },
  async run(args, io) {
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
      const counts = Object.entries(progress.counts).map(([k, v]) => `${k} ${v}`).join(', ');
      io.out(`${task.id} layout ${index} (tier ${layout.tier}) of set v${set.version} ${set.sha256.slice(0, 12)}\n${progress.summary}\nprogress ${progress.progress.toFixed(3)}\ncounts   ${counts}\n`);
    }
  },
};

export const commands: CliCommand[] = [score];
