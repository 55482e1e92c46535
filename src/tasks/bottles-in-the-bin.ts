import { BIN, BOTTLE } from './catalogue.js';
import { endStatesById, fmt } from './end-state.js';
import type { TaskDefinition } from './types.js';

const REGIONS = ['bin'];

/** Pick-and-place: every bottle into the bin, which may need nudging into reach. */
export const BOTTLES_IN_THE_BIN: TaskDefinition = {
  id: 'bottles-in-the-bin',
  name: 'bottles in the bin',
  prompt: 'put all the bottles in the bin',
  episodeSeconds: 60,
  workspace: { xMin: -0.27, xMax: 0.14, yMin: -0.44, yMax: 0.44 },
  objectKinds: [BOTTLE],
  fixtureKinds: [BIN],
  // The bin stands in front of the right arm's home keep-out (station.ts: fingertips to x = -0.13)
  // with its near wall ≥ 3 cm clear at any drawn yaw, centre 0.47–0.53 m from the right base.
  fixtures: [
    { id: 'bin', kind: BIN.id, region: { xMin: 0.07, xMax: 0.13, yMin: -0.33, yMax: -0.27 }, yawRangeRad: [-0.2, 0.2] },
  ],
  clearances: { objectM: 0.02, fixtureM: 0.03, inFixtureObjectM: 0.003, inFixtureWallM: 0.005 },
  regionIds: REGIONS,
  tiers: [
    {
      tier: 1,
      description: 'one upright bottle, bin in its home pose',
      minObjects: 1,
      maxObjects: 1,
      draw: { kinds: [BOTTLE.id], postures: ['upright'], fixturesVary: false },
    },
    {
      tier: 2,
      description: 'two upright bottles, bin in its home pose',
      minObjects: 2,
      maxObjects: 2,
      draw: { kinds: [BOTTLE.id], postures: ['upright'], fixturesVary: false },
    },
    {
      tier: 3,
      description: 'two or three bottles, upright or lying; the bin moves within its region',
      minObjects: 2,
      maxObjects: 3,
      draw: { kinds: [BOTTLE.id], postures: ['upright', 'lying'], fixturesVary: true },
    },
    {
      tier: 4,
      description: 'three or four bottles, upright or lying; the bin moves within its region',
      minObjects: 3,
      maxObjects: 4,
      draw: { kinds: [BOTTLE.id], postures: ['upright', 'lying'], fixturesVary: true },
    },
    {
      tier: 5,
      description: 'four or five bottles, upright or lying; the bin moves within its region',
      minObjects: 4,
      maxObjects: 5,
      draw: { kinds: [BOTTLE.id], postures: ['upright', 'lying'], fixturesVary: true },
    },
  ],
  /** Bottles in the bin ÷ bottles in the layout. */
  progressUnits: (layout) => layout.objects.length,
  scoreProgress(layout, endStates) {
    const byId = endStatesById('bottles-in-the-bin', REGIONS, layout, endStates);
    const target = layout.objects.length;
    const inBin = layout.objects.filter((o) => byId.get(o.id)?.region === 'bin').length;
    const progress = target === 0 ? 0 : inBin / target;
    return {
      progress,
      counts: { inBin, target },
      summary: `${inBin} of ${target} bottle${target === 1 ? '' : 's'} in the bin (progress ${fmt(progress)}).`,
    };
  },
};
