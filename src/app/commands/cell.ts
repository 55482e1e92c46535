/**
 * The emulated cell's own commands:
 *   tandem cell run    the cell served on two socat ptys, for driving by hand with any tool
 *   tandem cell truth  the cell truth (its hidden physics) — only with --reveal
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError, intOption, type CliCommand, type CliIo, type ParsedCommandArgs } from '../command.js';
import { ARM_SIDES, type ArmSide } from '../../rig/contract.js';
import { getTask } from '../../tasks/registry.js';
import type { Layout, TaskDefinition } from '../../tasks/types.js';
import { layoutAt } from '../../layouts/layout-set.js';
import {
  CellGapError,
  DEFAULT_CELL_GAP,
  cellTruth,
  cellTruthJson,
  formatCellGap,
  parseCellGap,
  type CellGap,
} from '../../emulated-cell/cell-truth.js';
import { serveCellOnPtys, type PtyCell } from '../../emulated-cell/emulated-cell.js';
import { defaultCellTable } from '../../emulated-cell/register.js';
import { SCRIPTED_OPERATOR } from '../session-operators.js';
import { readLayoutSetFile } from './layouts.js';
import { answerTypedCommands, emulatorCommand, transportOption } from './rig.js';

function gapOption(args: ParsedCommandArgs): CellGap {
  const text = args.values.gap;
  if (text === undefined) return DEFAULT_CELL_GAP;
  try {
    return parseCellGap(String(text));
  } catch (e) {
    if (e instanceof CellGapError) throw new UserError(e.message);
    throw e;
  }
}

function tableOption(args: ParsedCommandArgs, io: CliIo): { task: TaskDefinition; layout: Layout; what: string } {
  if (args.values.layouts === undefined) {
    if (args.values.layout !== undefined)
      throw new UserError('--layout needs --layouts FILE (the layout set it indexes).');
    const t = defaultCellTable();
    return { ...t, what: `the default ${t.task.id} layout (tier ${t.layout.tier})` };
  }
  const { set } = readLayoutSetFile(io, String(args.values.layouts));
  const index = intOption(args, 'layout', undefined, 0, set.layouts.length - 1);
  return {
    task: getTask(set.task),
    layout: layoutAt(set, index),
    what: `layout ${index} (tier ${set.layouts[index].tier}) of ${set.sha256.slice(0, 12)}…`,
  };
}

const run: CliCommand = {
  path: ['cell', 'run'],
  summary: 'serve the emulated cell (arms, objects, a hidden reality gap) on two socat ptys for driving by hand',
  help: `Usage: tandem cell run [--layouts FILE --layout I] [--gap seed:N|none] [--link DIR] [--transport slcan|damiao] [--placement-seed K]

Builds the emulated cell — a world of its own whose arms the two YAM buses' motors move, with the
layout placed on its table as an operator would — and serves each arm's adapter on a socat pty:
DIR/yam-left and DIR/yam-right. Point any tool at them as at hardware, e.g.
'tandem rig probe --transport slcan --port DIR/yam-left', or a yam-can rig config.
Ctrl-C stops it and removes the ptys. Needs socat (Debian: apt-get install socat).

While it runs, type a command and Enter:
  left|right CMD   a fault on that arm's bus, as 'tandem rig emulate' takes them:
                   silent ID, answer ID, fault ID HEX, garbage, unplug, replug, latency MS, drop P, status
  interlock open|closed   the cell's interlock input (reaches a host through the cell I/O, not the ptys)
  estop press|release     the cell's e-stop button (likewise)
  table            each object's end state now, and the ${SCRIPTED_OPERATOR}'s score
  timing           how the world keeps up with real time

  --layouts FILE     layout set; with --layout I the layout on the table (default: a bottles layout, tier 3)
  --gap seed:N|none  the cell's hidden physics: a seeded draw, or exactly the sim twin's (default ${formatCellGap(DEFAULT_CELL_GAP)})
  --link DIR         folder for the ptys (default ./cell)
  --transport        slcan (default) or damiao
  --placement-seed K seeds the operator's placement noise (default 0)`,
  options: {
    layouts: { type: 'string' },
    layout: { type: 'string' },
    gap: { type: 'string' },
    link: { type: 'string' },
    transport: { type: 'string' },
    'placement-seed': { type: 'string' },
  },
  async run(args, io) {
    const gap = gapOption(args);
    const table = tableOption(args, io);
    const transport = args.values.transport === undefined ? 'slcan' : transportOption(args);
    const placementSeed = intOption(args, 'placement-seed', 0, 0, 2 ** 31 - 1);
    const dir = resolve(io.cwd, typeof args.values.link === 'string' ? args.values.link : 'cell');
    mkdirSync(dir, { recursive: true });
    let cell: PtyCell;
    try {
      cell = await serveCellOnPtys({ task: table.task, layout: table.layout, gap, placementSeed, transport, dir });
    } catch (e) {
      throw new UserError((e as Error).message);
    }
    io.out(
      `Emulated cell (${transport}, gap ${formatCellGap(gap)}, truth ${cell.truth.sha256.slice(0, 12)}…) with ${table.what} on its table.\n` +
        `  left arm  ${cell.links.left}\n  right arm ${cell.links.right}\n` +
        `Try: tandem rig probe --transport ${transport} --port ${cell.links.left}\nType 'table', 'timing', or a fault; Ctrl-C to stop.\n`,
    );
    let lastFaults = '';
    const faultWatch = setInterval(() => {
      const now = cell
        .faults()
        .map((f) => f.message)
        .join(' ');
      if (now !== lastFaults && now) io.err(`cell: ${now}\n`);
      lastFaults = now;
    }, 200);
    await answerTypedCommands(io, (line) => cellCommand(cell, line));
    clearInterval(faultWatch);
    const t = cell.world.timing();
    await cell.stop();
    io.out(
      `Stopped the cell after ${t.wallS.toFixed(1)} s; the world used ${(t.busyFraction * 100).toFixed(1)}% of a core (${t.marginX.toFixed(1)}× real-time margin), worst lag ${t.maxLagMs.toFixed(0)} ms.\n`,
    );
  },
};

async function cellCommand(cell: PtyCell, line: string): Promise<string> {
  const [word, ...rest] = line.split(/\s+/);
  if ((ARM_SIDES as readonly string[]).includes(word))
    return emulatorCommand(cell.emulators[word as ArmSide], rest.join(' '));
  switch (word) {
    case '':
      return '';
    case 'interlock':
      if (rest[0] !== 'open' && rest[0] !== 'closed') throw new Error("interlock needs 'open' or 'closed'.");
      cell.inputs.interlockOpen = rest[0] === 'open';
      return `interlock ${rest[0]}`;
    case 'estop':
      if (rest[0] !== 'press' && rest[0] !== 'release') throw new Error("estop needs 'press' or 'release'.");
      cell.inputs.setEstop(rest[0] === 'press');
      return `e-stop ${rest[0] === 'press' ? 'pressed' : 'released'}`;
    case 'table': {
      const ends = cell.world.endStates();
      const p = cell.task.scoreProgress(cell.layout, ends);
      return [
        ...ends.map(
          (e) =>
            `${e.id}: ${e.offTable ? 'off the table' : (e.region ?? 'on the table')}${e.upright === undefined ? '' : e.upright ? ', upright' : ', not upright'}`,
        ),
        `${SCRIPTED_OPERATOR}: ${p.summary}`,
      ].join('\n');
    }
    case 'timing': {
      const t = cell.world.timing();
      return `world ${t.worldS.toFixed(1)} s in ${t.wallS.toFixed(1)} s of wall time; ${(t.busyFraction * 100).toFixed(1)}% of a core (${t.marginX.toFixed(1)}× margin); worst lag ${t.maxLagMs.toFixed(0)} ms; fell behind ${t.behindEvents} time(s)`;
    }
    default:
      throw new Error(
        `Unknown cell command '${word}'. Try: left|right CMD, interlock open|closed, estop press|release, table, timing.`,
      );
  }
}

const truth: CliCommand = {
  path: ['cell', 'truth'],
  summary: "print the emulated cell's hidden physics (its reality gap) — only with --reveal",
  help: `Usage: tandem cell truth --reveal [--gap seed:N|none] [--json]

The cell truth is the physics the emulated cell really runs on: object masses and frictions, joint
damping and friction, armature, motor torque constants, gripper squeeze, reply latency, camera
mounting errors. The station never reads it: system identification and paired reports must find
the gap from recordings. Reveal it only to check them (tests, benchmarks, a lab's own audit).

  --reveal           required: you accept that you have seen the answer
  --gap seed:N|none  which cell (default ${formatCellGap(DEFAULT_CELL_GAP)})`,
  options: { reveal: { type: 'boolean' }, gap: { type: 'string' } },
  async run(args, io) {
    if (args.values.reveal !== true) {
      throw new UserError(
        'The cell truth is hidden from the station so that system identification and paired reports must find the gap themselves; add --reveal if you are checking them and accept that you have seen the answer.',
      );
    }
    const t = cellTruth(gapOption(args));
    if (args.values.json) {
      io.out(`${JSON.stringify({ sha256: t.sha256, truth: JSON.parse(cellTruthJson(t.truth)) })}\n`);
      return;
    }
    const p = t.truth.physics;
    const f = (x: number): string => x.toFixed(4).replace(/\.?0+$/, '');
    io.out(
      `cell truth ${t.sha256} (gap ${t.truth.gap})\n` +
        `  objects    mass × ${f(p.objectMassScale)}, friction × ${f(p.objectFrictionScale)}; table friction ${f(p.tableFriction)}, finger pads ${f(p.fingerFriction)}; squeeze ≤ ${f(p.gripperMaxForceN)} N; gripper rotor ${f(p.fingerReflectedMassKg ?? 0)} kg at each finger\n` +
        p.joints
          .map(
            (j, i) =>
              `  joint ${i + 1}    damping ${f(j.dampingNms)} N·m·s/rad, Coulomb ${f(j.frictionNm)} N·m, armature ${f(j.armatureKgM2)} kg·m², torque × ${f(t.truth.motorTorqueScale[i])}\n`,
          )
          .join('') +
        `  adapters   reply latency ${f(t.truth.replyLatencyMs)} ms\n` +
        Object.entries(t.truth.cameraOffsets)
          .map(
            ([n, o]) =>
              `  ${n.padEnd(15)} offset ${o.positionM.map((v) => (v * 1000).toFixed(1)).join(', ')} mm, ${o.rotationRad.map((v) => ((v * 180) / Math.PI).toFixed(2)).join(', ')}°\n`,
          )
          .join(''),
    );
  },
};

export const commands: CliCommand[] = [run, truth];
