/**
 * System identification of the sim twin (calibration/sysid):
 *   tandem sysid excite   an excitation trajectory for the emulated leader (takes worth fitting on)
 *   tandem sysid fit      episodes → a new, hashed sim calibration record with its lineage
 *   tandem sysid check    a calibration's tracking error on episodes, without fitting
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError, intOption, numberOption, requireString, type CliCommand, type CliIo } from '../command.js';
import { yamRigModel } from '../../rig/yam.js';
import { simCalibrationJson } from '../../sim/calibration.js';
import { LEADER_REST_POSE } from '../../../drivers/leaders/emulators/operator-hand.js';
import { excitationTrajectory } from '../../../calibration/sysid/excitation.js';
import { SysidEpisodeError } from '../../../calibration/sysid/episode-trajectory.js';
import { DEFAULT_FIT_SECONDS, fitSysid, worstJointPlot, type SysidFitResult } from '../../../calibration/sysid/fit.js';
import { checkSysid } from '../../../calibration/sysid/check.js';
import { mrad } from '../../../calibration/sysid/residuals.js';
import { SysidError } from '../../../calibration/sysid/sysid-error.js';
import { calibrationArg } from './sim.js';
import { readLayoutSetFile } from './layouts.js';
import type { LayoutSet } from '../../layouts/layout-set.js';

const JOINT_LABELS = ['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'R1', 'R2', 'R3', 'R4', 'R5', 'R6'];

function files(args: { positionals: string[] }, io: CliIo): string[] {
  return args.positionals.map((f) => resolve(io.cwd, f));
}

/** --layouts FILE (repeatable): the layout sets takes recorded with a layout name by SHA-256. */
function layoutSets(args: { values: Record<string, unknown> }, io: CliIo): LayoutSet[] {
  const v = args.values.layouts;
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return list.map((f) => readLayoutSetFile(io, String(f)).set);
}

const LAYOUTS_HELP = `  --layouts FILE  a layout set (repeatable) that takes recorded with a layout on the table came from;
                  the file names the set only by its SHA-256, and the replay places the layout's
                  objects and fixtures where it says. A take whose set is not given is refused.`;

/** Sysid's own errors are one sentence for the operator. */
async function userErrors<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof SysidError || e instanceof SysidEpisodeError) throw new UserError(e.message);
    throw e;
  }
}

const excite: CliCommand = {
  path: ['sysid', 'excite'],
  summary: 'write an excitation trajectory for the emulated leader: takes rich enough to fit the sim twin on',
  help: `Usage: tandem sysid excite --seconds S [--seed N] -o trajectory.json

Lifts the arms from the leader's rest pose into free space, then moves every joint on a sum of
sines (0.15–1.2 Hz, seeded phases) with the grippers opening and closing — fingertips kept at least
5 cm above the table and the arms apart. Replay it on the emulated cell with
  tandem teleop record --leader emulated-yam --trajectory trajectory.json --empty-table …
Make S cover the whole recording: the engage ramp, every take and every reset.`,
  options: { seconds: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string', short: 'o' } },
  async run(args, io) {
    const seconds = numberOption(args, 'seconds', undefined, 5, 7200);
    const seed = intOption(args, 'seed', 1, 0, 2 ** 31 - 1);
    const out = resolve(io.cwd, requireString(args, 'out'));
    const t = excitationTrajectory(yamRigModel(), { seconds, seed, start: LEADER_REST_POSE });
    writeFileSync(out, `${JSON.stringify({ points: t.points })}\n`);
    io.err(
      `${t.points.length} points over ${seconds} s (amplitude × ${t.amplitudeScale.toFixed(2)}, fingertips ≥ ${(t.minTipHeightM * 100).toFixed(1)} cm above the table) → ${out}\n`,
    );
  },
};

const fit: CliCommand = {
  path: ['sysid', 'fit'],
  summary: 'fit the sim twin to recorded episodes: a new sim calibration record, checked on held-out episodes',
  help: `Usage: tandem sysid fit EPISODE.mcap… -o calib.json [--from FILE] [--engine E] [--layouts FILE…] [--holdout K] [--iterations N] [--fit-seconds S] [--starts N] [--objects-only] [--plot fit.svg] [--workers N] [--json]

Replays each episode's applied commands in the sim twin, open loop, from its recorded start pose,
and fits joint damping, Coulomb friction, armature and motor torque scale per joint, the command
latency and the gripper's reflected rotor mass to the measured joint angles in free motion
(Levenberg–Marquardt, replays on N worker threads, default one per core). Then, on takes that hold
objects with their layout replayed, the joints held as fitted: the holding samples (the held
object's weight sags the arm) screen the objects' mass scale, the squeeze and the object and finger
frictions, and each is fitted only when it moves the held arm along a trend (in practice the mass).
The last K episodes by file name (default a fifth, at least one) are held out: the fit never sees
them, and the RMS error on them before and after (free motion, and holding) is what says whether it
worked. Parameters the episodes do not pin down keep the start value and are named. Episodes of
another rig model, with safety holds, e-stops or gaps, or recorded on a table the file does not
name are left out with the reason (one whose only interventions are watchdog holds is replayed
from the first command after the last, when at least 4 s follow); a replay that loses a held object has its holding samples left
out; a cut-off file is refused (recover it first).

  --from FILE     the record to start from (default: the built-in one); its other fields are kept
  --engine E      rapier | mujoco: fit that physics engine (the start record's "engine" field;
                  the replays run on the engine the record names)
${LAYOUTS_HELP}
  -o FILE         where the new record goes (what --calibration takes)
  --iterations N  at most N Levenberg–Marquardt iterations per stage (default 8; fewer: a quicker, rougher fit)
  --fit-seconds S seconds of each fitted episode the descent replays (default ${DEFAULT_FIT_SECONDS}; fewer: quicker,
                  on less motion); held-out episodes are always replayed whole
  --starts N      starting points screened before the descent, the start record among them (default 3)
  --objects-only  keep the joints as --from has them (an earlier fit) and fit only the held objects:
                  for new objects or new holding takes on arms already identified
  --plot FILE     SVG of the worst held-out joint: measured, before and after`,
  options: {
    out: { type: 'string', short: 'o' },
    from: { type: 'string' },
    engine: { type: 'string' },
    layouts: { type: 'string', multiple: true },
    holdout: { type: 'string' },
    plot: { type: 'string' },
    workers: { type: 'string' },
    json: { type: 'boolean' },
    starts: { type: 'string' },
    iterations: { type: 'string' },
    'fit-seconds': { type: 'string' },
    'objects-only': { type: 'boolean' },
  },
  positionals: [1, 10_000],
  async run(args, io) {
    const out = resolve(io.cwd, requireString(args, 'out'));
    const from = calibrationArg(args, io, 'from');
    const sets = layoutSets(args, io);
    const model = yamRigModel();
    const r = await userErrors(() =>
      fitSysid({
        files: files(args, io),
        model,
        from,
        layoutSets: sets,
        holdout: args.values.holdout === undefined ? undefined : intOption(args, 'holdout', undefined, 1, 1000),
        workers: args.values.workers === undefined ? undefined : intOption(args, 'workers', undefined, 1, 64),
        starts: args.values.starts === undefined ? undefined : intOption(args, 'starts', undefined, 1, 16),
        maxIterations:
          args.values.iterations === undefined ? undefined : intOption(args, 'iterations', undefined, 1, 100),
        fitSeconds:
          args.values['fit-seconds'] === undefined ? undefined : numberOption(args, 'fit-seconds', undefined, 1, 3600),
        objectsOnly: args.values['objects-only'] === true,
        onProgress: args.values.json ? undefined : (line) => io.err(`${line}\n`),
      }),
    );
    writeFileSync(out, `${JSON.stringify(JSON.parse(simCalibrationJson(r.calibration)), null, 2)}\n`);
    if (typeof args.values.plot === 'string')
      writeFileSync(resolve(io.cwd, args.values.plot), await worstJointPlot(r, model, from, sets));
    if (args.values.json) {
      io.out(`${JSON.stringify({ ...r, calibration: undefined, output: out })}\n`);
      return;
    }
    io.out(fitSummary(r, out));
  },
};

export function fitSummary(r: SysidFitResult, out: string): string {
  const lines: string[] = [];
  const held = r.episodes.filter((e) => e.role === 'holdout').length;
  lines.push(
    `Fitted on ${r.episodes.length - held} episode${r.episodes.length - held === 1 ? '' : 's'}, ${held} held out, in ${r.wallS.toFixed(0)} s (${r.iterations} iterations, ${r.evaluations} evaluations; stopped: ${r.stopped}).`,
  );
  for (const e of r.excluded) lines.push(`  left out: ${e.reason}`);
  lines.push(
    `Held-out RMS joint error: ${mrad(r.heldOut.beforeAll)} → ${mrad(r.heldOut.afterAll)} (${r.heldOut.afterAll < r.heldOut.beforeAll ? `${((1 - r.heldOut.afterAll / r.heldOut.beforeAll) * 100).toFixed(0)}% lower` : 'not lower'}).`,
  );
  lines.push(`  joint    ${JOINT_LABELS.map((l) => l.padStart(7)).join('')}`);
  lines.push(`  before   ${r.heldOut.before.map((v) => (v * 1000).toFixed(2).padStart(7)).join('')}  mrad`);
  lines.push(`  after    ${r.heldOut.after.map((v) => (v * 1000).toFixed(2).padStart(7)).join('')}  mrad`);
  const h = r.heldOut.holding;
  if (h)
    lines.push(
      `Held-out RMS error of the pitch joints (2–4) while holding objects (${h.samples} samples): ${mrad(h.before)} → ${mrad(h.after)}.`,
    );
  for (const e of r.holdingLeftOut) lines.push(`  holding left out: ${e.reason}`);
  lines.push('Parameters (± one standard deviation):');
  for (const p of r.parameters) {
    const f = (v: number): string => Number(v.toPrecision(4)).toString();
    const sd = Number.isFinite(p.sigma) ? f(p.sigma) : '∞';
    const shown = p.identified || p.minor ? f(p.fitted) : '(kept)';
    const note =
      p.note ??
      (p.identified
        ? `± ${sd}`
        : p.minor
          ? `± ${sd}, fitted but carries under 2% of the gain: not a physical estimate`
          : `not identified by these episodes (± ${sd})`);
    lines.push(`  ${p.name.padEnd(26)} ${f(p.start).padStart(9)} → ${shown.padStart(9)} ${p.unit.padEnd(10)} ${note}`);
  }
  for (const n of r.notFitted) lines.push(`Not fitted: ${n}`);
  lines.push(
    `Wrote ${out}: ${r.calibration.name} v${r.calibration.version}, id ${r.calibrationSha256} (from ${r.fromSha256.slice(0, 12)}…). Run on it with --calibration ${out}.`,
  );
  return `${lines.join('\n')}\n`;
}

const check: CliCommand = {
  path: ['sysid', 'check'],
  summary: "print a sim calibration's tracking error on recorded episodes, without fitting",
  help: `Usage: tandem sysid check [--calibration FILE] [--engine E] [--layouts FILE…] EPISODE.mcap… [--json]

Replays each episode in the sim twin on the calibration (default: the built-in record), with the
layout on the table where the take had one, and prints the RMS joint-angle error per episode and
per joint (free motion; the burn-in, holding and table contacts are left out of the number, and
reported per phase beneath), and any held object the replay lost. --engine rapier|mujoco replays
on that physics engine (the record's "engine" field).

${LAYOUTS_HELP}`,
  options: {
    calibration: { type: 'string' },
    engine: { type: 'string' },
    layouts: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    workers: { type: 'string' },
  },
  positionals: [1, 10_000],
  async run(args, io) {
    const calibration = calibrationArg(args, io);
    const r = await userErrors(() =>
      checkSysid({
        files: files(args, io),
        model: yamRigModel(),
        calibration,
        layoutSets: layoutSets(args, io),
        workers: args.values.workers === undefined ? undefined : intOption(args, 'workers', undefined, 1, 64),
      }),
    );
    if (args.values.json) {
      io.out(`${JSON.stringify(r)}\n`);
      return;
    }
    const lines = [
      `${calibration.name} v${calibration.version}: RMS joint error ${mrad(r.overall)} over ${r.episodes.length} episode${r.episodes.length === 1 ? '' : 's'}.`,
    ];
    lines.push(`  ${'episode'.padEnd(48)}${JOINT_LABELS.map((l) => l.padStart(7)).join('')}`);
    for (const e of r.episodes)
      lines.push(
        `  ${e.file.split('/').pop()!.slice(-48).padEnd(48)}${e.problem ? `  replay failed: ${e.problem}` : e.rmsRad.map((v) => (v * 1000).toFixed(2).padStart(7)).join('')}`,
      );
    lines.push(`  ${'all (mrad)'.padEnd(48)}${r.perJoint.map((v) => (v * 1000).toFixed(2).padStart(7)).join('')}`);
    lines.push(
      `  by phase: ${r.phases.map((p) => `${p.phase} ${p.samples} samples${p.samples > 0 ? ` ${mrad(p.rmsRad)}` : ''}`).join(', ')} (the number above is free motion)`,
    );
    for (const e of r.episodes) if (e.lostObject) lines.push(`  holding: ${e.lostObject}`);
    for (const e of r.excluded) lines.push(`  left out: ${e.reason}`);
    io.out(`${lines.join('\n')}\n`);
  },
};

export const commands: CliCommand[] = [excite, fit, check];
