import { BOLTS, categoryOf, NUTS, RINGS, SCREWS, SORTER, TOTE } from './catalogue.js';
import { endStatesById, fmt } from './end-state.js';
import type { ObjectKind, TaskDefinition } from './types.js';

const KINDS: readonly ObjectKind[] = [...SCREWS, ...BOLTS, ...NUTS, ...RINGS];
const ids = (ks: readonly ObjectKind[]): string[] => ks.map((k) => k.id);
const LARGE = ids([SCREWS[2], BOLTS[2], NUTS[2], RINGS[2]]);
const MEDIUM = ids([SCREWS[1], BOLTS[1], NUTS[1], RINGS[1]]);
const SMALL = ids([SCREWS[0], BOLTS[0], NUTS[0], RINGS[0]]);
const REGIONS = ['tote', ...SORTER.regions.map((r) => r.id)];

/**
 * Contact-rich sorting: screws, bolts, nuts and bearing rings from the gray tote into their slots
 * of the red sorter. The tote is in reach of the left arm only and the bearing-ring slot of the
 * right arm only, so every ring takes a handover.
 */
export const SORT_FROM_TOTE: TaskDefinition = {
  id: 'sort-from-tote',
  name: 'sort from tote',
  prompt: 'sort the parts from the tote into the sorter',
  episodeSeconds: 180,
  workspace: { xMin: -0.3, xMax: 0.2, yMin: -0.4, yMax: 0.5 },
  objectKinds: KINDS,
  fixtureKinds: [TOTE, SORTER],
  fixtures: [
    { id: 'tote', kind: TOTE.id, region: { xMin: -0.05, xMax: -0.05, yMin: 0.32, yMax: 0.32 }, yawRangeRad: [0, 0] },
    {
      id: 'sorter',
      kind: SORTER.id,
      region: { xMin: -0.1, xMax: -0.1, yMin: -0.105, yMax: -0.105 },
      yawRangeRad: [0, 0],
    },
  ],
  clearances: { objectM: 0.02, fixtureM: 0.02, inFixtureObjectM: 0.002, inFixtureWallM: 0.005 },
  regionIds: REGIONS,
  tiers: [
    {
      tier: 1,
      description: 'four large parts in the tote',
      minObjects: 4,
      maxObjects: 4,
      draw: { kinds: LARGE, postures: ['upright', 'lying'], inFixture: 'tote', fixturesVary: false },
    },
    {
      tier: 2,
      description: 'eight large parts in the tote',
      minObjects: 8,
      maxObjects: 8,
      draw: { kinds: LARGE, postures: ['upright', 'lying'], inFixture: 'tote', fixturesVary: false },
    },
    {
      tier: 3,
      description: 'fifteen large and medium parts in the tote',
      minObjects: 15,
      maxObjects: 15,
      draw: { kinds: [...LARGE, ...MEDIUM], postures: ['upright', 'lying'], inFixture: 'tote', fixturesVary: false },
    },
    {
      tier: 4,
      description: 'thirty parts of every size in the tote',
      minObjects: 30,
      maxObjects: 30,
      draw: {
        kinds: [...LARGE, ...MEDIUM, ...SMALL],
        postures: ['upright', 'lying'],
        inFixture: 'tote',
        fixturesVary: false,
      },
    },
    {
      tier: 5,
      description: 'forty-five medium and small parts in the tote',
      minObjects: 45,
      maxObjects: 45,
      draw: { kinds: [...MEDIUM, ...SMALL], postures: ['upright', 'lying'], inFixture: 'tote', fixturesVary: false },
    },
  ],
  /** Parts in their correct sorter slot ÷ all parts. */
  progressUnits: (layout) => layout.objects.length,
  scoreProgress(layout, endStates) {
    const byId = endStatesById('sort-from-tote', REGIONS, layout, endStates);
    const kindById = new Map(KINDS.map((k) => [k.id, k]));
    let inCorrectSlot = 0;
    let inWrongSlot = 0;
    for (const o of layout.objects) {
      const region = byId.get(o.id)?.region;
      if (!region?.startsWith('slot:')) continue;
      const kind = kindById.get(o.kind);
      if (kind && region === `slot:${categoryOf(kind)}`) inCorrectSlot += 1;
      else inWrongSlot += 1;
    }
    const total = layout.objects.length;
    const elsewhere = total - inCorrectSlot - inWrongSlot;
    const progress = total === 0 ? 0 : inCorrectSlot / total;
    return {
      progress,
      counts: { inCorrectSlot, inWrongSlot, elsewhere, total },
      summary: `${inCorrectSlot} of ${total} parts in their correct slot, ${inWrongSlot} in a wrong slot, ${elsewhere} elsewhere (progress ${fmt(progress)}).`,
    };
  },
};
