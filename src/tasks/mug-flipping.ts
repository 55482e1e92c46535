import { MUG } from './catalogue.js';
import { endStatesById, fmt } from './end-state.js';
import { TaskInputError } from './errors.js';
import type { TaskDefinition } from './types.js';

/**
 * Turn every mug that is not upright upright. Upside-down mugs need a two-arm handover: the YAM
 * wrist cannot turn half a circle.
 */
export const MUG_FLIPPING: TaskDefinition = {
  id: 'mug-flipping',
  name: 'mug flipping',
  prompt: 'turn all the mugs upright',
  episodeSeconds: 90,
  workspace: { xMin: -0.27, xMax: 0.14, yMin: -0.42, yMax: 0.42 },
  objectKinds: [MUG],
  fixtureKinds: [],
  fixtures: [],
  clearances: { objectM: 0.03, fixtureM: 0.03, inFixtureObjectM: 0.003, inFixtureWallM: 0.005 },
  regionIds: [],
  tiers: [
    {
      tier: 1,
      description: 'one mug lying on its side',
      minObjects: 1,
      maxObjects: 1,
      draw: { kinds: [MUG.id], postures: ['lying'], minNotUpright: 1, fixturesVary: false },
    },
    {
      tier: 2,
      description: 'two mugs, upright or lying, at least one lying',
      minObjects: 2,
      maxObjects: 2,
      draw: { kinds: [MUG.id], postures: ['upright', 'lying'], minNotUpright: 1, fixturesVary: false },
    },
    {
      tier: 3,
      description: 'two or three mugs, one upside down, the rest upright or lying',
      minObjects: 2,
      maxObjects: 3,
      draw: {
        kinds: [MUG.id],
        postures: ['upright', 'lying'],
        upsideDown: [1, 1],
        minNotUpright: 1,
        fixturesVary: false,
      },
    },
    {
      tier: 4,
      description: 'three or four mugs, one or two upside down',
      minObjects: 3,
      maxObjects: 4,
      draw: {
        kinds: [MUG.id],
        postures: ['upright', 'lying'],
        upsideDown: [1, 2],
        minNotUpright: 1,
        fixturesVary: false,
      },
    },
    {
      tier: 5,
      description: 'four or five mugs, two or three upside down',
      minObjects: 4,
      maxObjects: 5,
      draw: {
        kinds: [MUG.id],
        postures: ['upright', 'lying'],
        upsideDown: [2, 3],
        minNotUpright: 1,
        fixturesVary: false,
      },
    },
  ],
  /**
   * (mugs now upright that were not upright at the start − mugs upright at the start that ended
   * not upright) ÷ mugs not upright at the start, floored at 0. A layout where every mug starts
   * upright has nothing to flip and no defined progress: scoring it is an error (tier layouts
   * never produce one).
   */
  progressUnits: (layout) => layout.objects.filter((o) => o.posture !== 'upright').length,
  scoreProgress(layout, endStates) {
    const byId = endStatesById('mug-flipping', [], layout, endStates);
    for (const o of layout.objects) {
      if (typeof byId.get(o.id)?.upright !== 'boolean') {
        throw new TaskInputError(
          `'${o.id}' has no "upright": true/false in the end state; mug flipping needs it for every mug.`,
        );
      }
    }
    const start = layout.objects.map((o) => ({
      wasUpright: o.posture === 'upright',
      isUpright: byId.get(o.id)?.upright === true,
    }));
    const notUprightAtStart = start.filter((m) => !m.wasUpright).length;
    const uprightAtStart = start.length - notUprightAtStart;
    if (notUprightAtStart === 0) {
      throw new TaskInputError(
        `Layout ${layout.index} has no mug that starts lying or upside down, so mug-flipping progress is undefined; use a layout from a tier sample.`,
      );
    }
    const newlyUpright = start.filter((m) => !m.wasUpright && m.isUpright).length;
    const knockedOver = start.filter((m) => m.wasUpright && !m.isUpright).length;
    const progress = Math.max(0, (newlyUpright - knockedOver) / notUprightAtStart);
    return {
      progress,
      counts: { newlyUpright, knockedOver, notUprightAtStart, uprightAtStart },
      summary:
        `${newlyUpright} of ${notUprightAtStart} mug${notUprightAtStart === 1 ? '' : 's'} that started not upright ${newlyUpright === 1 ? 'is' : 'are'} upright now, ` +
        `${knockedOver} of ${uprightAtStart} upright mug${uprightAtStart === 1 ? '' : 's'} knocked over (progress ${fmt(progress)}).`,
    };
  },
};
