/**
 * `tandem session plan|run|resume|export`: an operator's evaluation session on the rig (default
 * the embedded emulated cell) — a hash-pinned plan, the session engine (src/session) with the rig
 * rollout path of `tandem rig rollout`, a terminal operator or the cell's scripted one, and the
 * session's export. This file reads files and options and turns bad input into one sentence.
 */
import { EPISODE_CONTROL_HZ } from '../../rollout/run-episode.js';
import { readCalibrationFile, pjlinkFrom } from './projector.js';
import { sessionProjector } from '../session-projector.js';
import { LayoutProjector } from '../../../calibration/projector/layout-projector.js';
import { PngDirectoryOutput, PngFileOutput } from '../../../calibration/projector/outputs.js';
import { calibrationStoreInput } from '../../../calibration/projector/calibration-record.js';
import { type SessionProjector, type SessionRunRequest } from '../../session/ports.js';
import { isAbsolute, join, resolve } from 'node:path';
import {
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import { readLayoutSetFile, readUserFile } from './layouts.js';
import { timeoutOption } from './rig-rollout.js';
import { DEFAULT_DEADLINE_MS, STANDSTILL_DEADLINE_MS } from '../../rollout/rig-rollout.js';
import { getTask } from '../../tasks/registry.js';
import { parseLayoutSet, type LayoutSet } from '../../layouts/layout-set.js';
import { MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { StoreError, type Store } from '../../store/store.js';
import { checkPlanLayoutSet, parseSessionPlan, type SessionPlan } from '../../session/plan.js';
import { DEFAULT_BREAK_EVERY_S, runSession, startSession } from '../../session/engine.js';
import { JOURNAL, progressLine, sessionProgress } from '../../session/journal-state.js';
import { sessionExport } from '../../session/export.js';
import { preflight } from '../preflight.js';
import {
  cellIoSourceOf,
  rigConfigWithGrippers,
  STATION_CONFIG_HELP,
  STATION_CONFIG_OPTIONS,
  stationConfigFromArgs,
} from '../station-config.js';
import { DEFAULT_RIG_CONFIG } from '../rig-registry.js';
import { openCommandStore, withCommandStore } from '../station-store.js';
import { resolveDataDir } from '../data-dir.js';
import { defaultEpisodesDir } from '../episode-recording.js';
import { RigSessionRunner } from '../session-runner.js';
import { scriptedOperator, terminalOperator } from '../session-operators.js';
import { ScriptedHands, stationPlacementGate } from '../placement-check.js';
import { DEFAULT_PLACEMENT_THRESHOLDS } from '../../session/placement-gate.js';
import { plan, planError, preregister } from './session-plan.js';
import { sessionInterlocks } from '../session-interlocks.js';
import { SessionTakeover } from '../session-takeover.js';
import { DEFAULT_RAMP_S } from '../../teleop/follow.js';

const EXIT_STOPPED = 4;

/** The plan's layout set: --layouts FILE, else the store's copy, else the file the plan was made from; refused if its hash differs. */
function planLayoutSet(io: CliIo, args: ParsedCommandArgs, store: Store, p: SessionPlan): LayoutSet {
  let set: LayoutSet | undefined;
  let source: string;
  if (typeof args.values.layouts === 'string') {
    set = readLayoutSetFile(io, args.values.layouts).set;
    source = args.values.layouts;
  } else {
    set = store.loadLayoutSet(p.layoutSetSha256);
    source = 'in the store';
    if (!set && p.layoutSetFile) {
      const file = isAbsolute(p.layoutSetFile) ? p.layoutSetFile : resolve(io.cwd, p.layoutSetFile);
      const { text } = readUserFile(io, file, 'layout set');
      set = planError(() => parseLayoutSet(text, file));
      source = file;
    }
    if (!set)
      throw new UserError(
        `The layout set ${p.layoutSetSha256.slice(0, 12)} of this plan is not in the store; give it with --layouts FILE.`,
      );
  }
  planError(() => checkPlanLayoutSet(p, set, source));
  return set;
}

const runOptions = {
  layouts: { type: 'string' },
  ...STATION_CONFIG_OPTIONS,
  'scripted-operator': { type: 'boolean' },
  'blank-cameras': { type: 'boolean' },
  rate: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'break-minutes': { type: 'string' },
  episodes: { type: 'string' },
  'projector-calibration': { type: 'string' },
  'projector-out': { type: 'string' },
  pjlink: { type: 'string' },
  'cell-io': { type: 'string' },
  'stop-early': { type: 'boolean' },
  'placement-error-mm': { type: 'string' },
  'placement-max-mm': { type: 'string' },
  'placement-max-deg': { type: 'string' },
  leader: { type: 'string' },
  'ramp-s': { type: 'string' },
} as const;

const RUN_OPTIONS_HELP = `${STATION_CONFIG_HELP}
                       (default ${JSON.stringify(DEFAULT_RIG_CONFIG)}: the emulated cell)
  --scripted-operator  the emulated cell's scripted operator places, confirms, scores from the end state
                       and resets, with simulated operator seconds: the whole session runs headless
  --layouts FILE       the plan's layout set (default: the store's copy, else the file the plan was made from)
  --blank-cameras      black frames for a camera policy (rehearses timing only; stored as a rehearsal)
  --rate HZ            control rate (default ${EPISODE_CONTROL_HZ})
  --timeout-ms N       per-inference deadline; past it the rig holds and the rollout is marked failed (default ${DEFAULT_DEADLINE_MS}; ${STANDSTILL_DEADLINE_MS} on the virtual-time cell, where no arm waits on the policy)
  --break-minutes M    remind the operator to take a break every M minutes (default ${DEFAULT_BREAK_EVERY_S / 60})
  --episodes DIR       where episode files go (default <data dir>/episodes)
  --projector-calibration FILE  project each layout's footprints with this calibration
                       ('tandem projector calibrate'), black before every rollout; stored in the store
  --projector-out PATH where the frames go: a .png file replaced each frame (what a projector window
                       shows), or a folder of numbered frames (default <data dir>/projector.png)
  --pjlink HOST[:PORT] AV-mute the projector over PJLink for every blank (password: $TANDEM_PJLINK_PASSWORD)
  --stop-early         end the session by itself once the plan's pre-registered stopping rule holds
                       (journalled as stopped early; the rollouts saved against the plan are said)
  --placement-max-mm N, --placement-max-deg D  the placement check before start: the overhead camera
                       (cam_high) against the sim twin's picture of the layout; an object further off
                       is named and the start refused until it is placed again (default: station config placementCheck, else ${DEFAULT_PLACEMENT_THRESHOLDS.maxErrorMm} mm, ${DEFAULT_PLACEMENT_THRESHOLDS.maxErrorDeg}°).
                       Without a calibrated overhead camera the rollout runs unchecked (journalled so)
  --placement-error-mm N  with --scripted-operator: its first placement of each rollout puts the first
                       object N mm off its outline (placed again, it goes on it)
  --cell-io FILE       the cell PLC's e-stop and interlocks over OPC UA (docs/cell-io.md): an interlock that
                       opens mid-rollout stops the arms within one control cycle; a rollout does not
                       start while one is open; the tower light follows the session
  --leader SPEC        a leader arm to take over with in every rollout, as 'tandem rig rollout --leader' (emulated-yam,
                       yam:[damiao:]PORT[,PORT], gello:PORT[,PORT]): the handle's top button, or the line e (e, then
                       Enter) while a rollout runs, takes over from the policy (it pauses; the follower ramps to the
                       leader, refused while they are far apart) and gives back; each stretch is stored with its
                       rollout and counted as an assist in the session's export and report
  --ramp-s S           the ramp from the policy's last command to the leader when taking over (default ${DEFAULT_RAMP_S})

Without --scripted-operator the operator answers on this terminal (works over SSH): Enter confirms a
placement, each object is scored in the task's terms, p pauses, s stops for now (resume later),
e is the e-stop. Ctrl-C stops the running rollout (the rig holds, then damps); the session stays
open: 'tandem session resume ID' carries on at the exact rollout, every score kept.
Exit codes: 0 the session ended, 2 bad input, ${EXIT_STOPPED} stopped before its end (resumable).`;

async function runWithEngine(
  args: ParsedCommandArgs,
  io: CliIo,
  store: Store,
  sessionId: number,
  p: SessionPlan,
  set: LayoutSet,
): Promise<number> {
  const stopEarly = args.values['stop-early'] === true;
  const station = await stationConfigFromArgs(args.values, io.cwd);
  const cellIoFrom = cellIoSourceOf(
    station,
    typeof args.values['cell-io'] === 'string' ? resolve(io.cwd, args.values['cell-io']) : undefined,
  );
  const scripted = args.values['scripted-operator'] === true;
  const task = getTask(set.task);
  const dataDir = resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd);
  const episodesDir =
    typeof args.values.episodes === 'string' ? resolve(io.cwd, args.values.episodes) : defaultEpisodesDir(dataDir);
  const log = (line: string) => io.err(`${line}\n`);
  const rateHz = numberOption(args, 'rate', EPISODE_CONTROL_HZ, 1, MAX_CONTROL_RATE_HZ);
  // node-opcua loads only when a session asks for cell I/O (seconds of start-up otherwise).
  const cellIo =
    cellIoFrom !== undefined
      ? await (await import('../cell-io.js')).openCellIo(cellIoFrom, { dataDir, controlHz: rateHz, log })
      : undefined;
  const placementErrorMm = numberOption(args, 'placement-error-mm', 0, 0, 1000);
  if (placementErrorMm > 0 && !scripted)
    throw new UserError(
      '--placement-error-mm is how far the scripted operator misplaces an object: it needs --scripted-operator.',
    );
  const configured = { ...DEFAULT_PLACEMENT_THRESHOLDS, ...station.placementCheck };
  const thresholds = {
    maxErrorMm: numberOption(args, 'placement-max-mm', configured.maxErrorMm, 0.1, 1000),
    maxErrorDeg: numberOption(args, 'placement-max-deg', configured.maxErrorDeg, 0.1, 180),
  };
  const hands = scripted ? new ScriptedHands(placementErrorMm) : undefined;
  const takeover =
    typeof args.values.leader === 'string'
      ? new SessionTakeover({
          spec: args.values.leader,
          rampS: numberOption(args, 'ramp-s', DEFAULT_RAMP_S, 0.1, 10),
          log,
        })
      : undefined;
  const runner = await RigSessionRunner.open(
    {
      station: { ...station, rig: rigConfigWithGrippers(station, store) },
      store,
      episodesDir,
      set,
      rateHz,
      ...(cellIo ? { cellIo } : {}),
      deadlineMs: timeoutOption(args),
      lookAtTable: scripted,
      ...(hands ? { tableLayout: (r: SessionRunRequest) => hands.onTable(r, r.layout) } : {}),
      blind: p.blind,
      blankCameras: args.values['blank-cameras'] === true,
      log,
      ...(takeover ? { takeover } : {}),
    },
    p.policies.map((x) => x.spec),
    io,
  );
  try {
    // Before the operator places anything; a blind session names its policies by label only.
    await preflight({
      station,
      policies: p.policies.map((x) => ({ ...runner.policyInfo(x.spec)!, ...(p.blind ? { name: x.label } : {}) })),
      blankCameras: args.values['blank-cameras'] === true,
      // Open interlocks are not refused here: the session waits for them to close (sessionInterlocks).
    });
  } catch (e) {
    await runner.close();
    await cellIo?.close();
    throw e;
  }
  const operator = scripted
    ? scriptedOperator(log, hands)
    : terminalOperator(process.stdin, process.stderr, undefined, takeover ? { takeover } : {});
  if (takeover)
    log(
      `Taking over with ${takeover.spec}: while a rollout runs, the handle's top button${scripted ? '' : ', or e then Enter,'} takes over from the policy, and again gives back.`,
    );
  const placement = stationPlacementGate(station, { thresholds, ...(hands ? { hands } : {}) });
  const projector = await projectorFor(args, io, store, dataDir, log);
  if (projector) log(`Projecting with the ${projector.description}.`);
  // Tests (and the operator) wait for this line: the session is journalled from here on.
  io.err(
    `Session ${sessionId}: ${p.rollouts.length} rollouts of ${p.policies.map((x) => x.label).join(', ')}; ${progressLine(sessionProgress(p, store.listSessionJournal(sessionId), Date.now()))}.\n`,
  );
  try {
    const r = await runSession({
      store,
      sessionId,
      plan: p,
      set,
      task,
      runner,
      operator,
      ...(projector ? { projector } : {}),
      ...(cellIo ? { interlocks: sessionInterlocks(cellIo.plc) } : {}),
      placement: placement.gate,
      signal: io.signal,
      breakEveryS: numberOption(args, 'break-minutes', DEFAULT_BREAK_EVERY_S / 60, 0.01, 24 * 60) * 60,
      stopEarly,
    });
    const rolloutsSaved = r.stoppedEarly ? p.rollouts.length - r.progress.done : 0;
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ session: sessionId, ended: r.ended, stoppedBecause: r.stoppedBecause ?? null, stoppedEarly: r.stoppedEarly === true, rolloutsSaved, analysis: r.analysis ?? null, progress: r.progress })}\n`,
      );
    } else {
      const how = r.stoppedEarly
        ? `stopped early (${r.analysis!.pairs} of ${r.analysis!.maxPairs} pairs; ${rolloutsSaved} of ${p.rollouts.length} planned rollouts saved)`
        : 'ended';
      const verdict = r.analysis ? ` ${r.analysis.sentence}` : '';
      io.out(
        r.ended
          ? `Session ${sessionId} ${how}: ${progressLine(r.progress)}.${verdict} Export it with: tandem session export ${sessionId} --json\n`
          : `Session ${sessionId} stopped (${r.stoppedBecause}): ${progressLine(r.progress)}.${verdict} Carry on with: tandem session resume ${sessionId}\n`,
      );
    }
    return r.ended ? 0 : EXIT_STOPPED;
  } finally {
    if ('close' in operator && typeof operator.close === 'function') operator.close();
    await placement.close();
    await runner.close();
    cellIo?.board.update({ sessionId: '', rolloutPhase: 'idle' });
    await cellIo?.close();
  }
}

/** --projector-calibration: the layout projector the session shows footprints with (its calibration stored), or undefined. */
async function projectorFor(
  args: ParsedCommandArgs,
  io: CliIo,
  store: Store,
  dataDir: string,
  log: (line: string) => void,
): Promise<SessionProjector | undefined> {
  const file = args.values['projector-calibration'];
  if (file === undefined) {
    if (args.values['projector-out'] !== undefined || args.values.pjlink !== undefined)
      throw new UserError(
        '--projector-out and --pjlink need --projector-calibration FILE (the table-to-projector calibration).',
      );
    return undefined;
  }
  const calibration = await readCalibrationFile(io, String(file));
  store.putCalibration(calibrationStoreInput(calibration));
  const out =
    typeof args.values['projector-out'] === 'string'
      ? resolve(io.cwd, args.values['projector-out'])
      : join(dataDir, 'projector.png');
  const output = out.toLowerCase().endsWith('.png') ? new PngFileOutput(out) : new PngDirectoryOutput(out);
  const control = pjlinkFrom(args, io);
  return sessionProjector(
    new LayoutProjector({ calibration, output, ...(control ? { control } : {}) }),
    `to ${out}${control ? ' with PJLink' : ''}`,
    log,
  );
}

function refuseStopEarlyWithoutAnalysis(args: ParsedCommandArgs, p: SessionPlan, source: string): void {
  if (args.values['stop-early'] === true && !p.analysis) {
    throw new UserError(
      `--stop-early needs a pre-registered analysis plan, and ${source} has none: add one before the first rollout with 'tandem session preregister --plan FILE'.`,
    );
  }
}

function storeErrors<T>(fn: () => Promise<T>): Promise<T> {
  return fn().catch((e: unknown) => {
    if (e instanceof StoreError) throw new UserError(e.message);
    throw e;
  });
}

const run: CliCommand = {
  path: ['session', 'run'],
  summary: 'run a planned evaluation session on the rig (default the emulated cell), journalled crash-safe',
  help: `Usage: tandem session run --plan FILE [--station-config FILE | --rig-config FILE] [--scripted-operator] [options]

Starts the session the plan describes, in the station store (--data), and walks every planned
rollout: show the layout, the operator places and confirms, the projector blanks, the policy runs
the episode on the rig (recorded, stored), the operator scores each object, resets, next. Every
action is committed to the store before the next prompt.

  --plan FILE          a plan written by 'tandem session plan'
${RUN_OPTIONS_HELP}`,
  options: { plan: { type: 'string' }, ...runOptions },
  async run(args, io) {
    const file = requireString(args, 'plan');
    const { text } = readUserFile(io, file, 'session plan');
    const p = planError(() => parseSessionPlan(text, file));
    const store = openCommandStore(args.values, io);
    try {
      return await storeErrors(async () => {
        refuseStopEarlyWithoutAnalysis(args, p, file);
        const set = planLayoutSet(io, args, store, p);
        const scripted = args.values['scripted-operator'] === true;
        const id = startSession(store, p, set, scripted ? scriptedOperator(() => {}).name : 'operator (terminal)', {
          stopEarly: args.values['stop-early'] === true,
        });
        return runWithEngine(args, io, store, id, p, set);
      });
    } finally {
      store.close();
    }
  },
};

const resume: CliCommand = {
  path: ['session', 'resume'],
  summary: 'carry on a session that stopped (a crash, Ctrl-C, stop for now) at its exact rollout',
  help: `Usage: tandem session resume ID [--station-config FILE | --rig-config FILE] [--scripted-operator] [options]

Replays the session's journal and carries on where its last committed action left it: every
score kept, nothing scored twice. A rollout cut off mid-episode is marked interrupted, its
episode file recovered ('tandem record recover'), and offered for redo.

${RUN_OPTIONS_HELP}`,
  options: { ...runOptions },
  positionals: [1, 1],
  async run(args, io) {
    const id = Number(args.positionals[0]);
    if (!Number.isSafeInteger(id) || id < 1)
      throw new UserError(
        `A session id is a whole number (as 'tandem session run' printed it), not '${args.positionals[0]}'.`,
      );
    const store = openCommandStore(args.values, io);
    try {
      return await storeErrors(async () => {
        const session = store.getSession(id);
        const stored = store.getSessionPlan(id);
        if (!session || !stored)
          throw new UserError(`There is no evaluation session ${id} in the store (${store.file}).`);
        if (session.endedAt !== null)
          throw new UserError(
            `Session ${id} ended at ${session.endedAt}; export it with: tandem session export ${id} --json`,
          );
        const p = planError(() => parseSessionPlan(stored.planJson, `session ${id}'s plan`));
        refuseStopEarlyWithoutAnalysis(args, p, `session ${id}'s plan`);
        const set = planLayoutSet(io, args, store, p);
        store.appendSessionJournal({ sessionId: id, action: JOURNAL.sessionResumed });
        return runWithEngine(args, io, store, id, p, set);
      });
    } finally {
      store.close();
    }
  },
};

const exportCommand: CliCommand = {
  path: ['session', 'export'],
  summary: "a session's plan, rollouts, scores, operator time and recordings (blind key once it ended)",
  help: `Usage: tandem session export ID --json

Prints the session as JSON: its plan (policies as labels until the session ends), each planned
rollout with its attempts, stored rollout, status, the operator's score (per-object end states,
progress, counts, note), operator seconds (place, score, reset) and its episode file (and whether
it exists); the session's operator hours; and, only once the session has ended, the blind key
(which label was which policy).`,
  options: {},
  positionals: [1, 1],
  async run(args, io) {
    const id = Number(args.positionals[0]);
    if (!Number.isSafeInteger(id) || id < 1)
      throw new UserError(`A session id is a whole number, not '${args.positionals[0]}'.`);
    if (!args.values.json) throw new UserError("'tandem session export' writes JSON: add --json.");
    await withCommandStore(args.values, io, (store) => {
      const stored = store.getSessionPlan(id);
      if (!stored) throw new UserError(`There is no evaluation session ${id} in the store (${store.file}).`);
      const p = planError(() => parseSessionPlan(stored.planJson, `session ${id}'s plan`));
      io.out(`${JSON.stringify(sessionExport(store, id, p), null, 2)}\n`);
    });
  },
};

export const commands: CliCommand[] = [plan, preregister, run, resume, exportCommand];
