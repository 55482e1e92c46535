/**
 * What system identification needs from one recorded episode: the measured joint states
 * (position, velocity, effort) and the commands as the rig applied them, each with its time, the
 * safety interventions, and whether the file can be trusted as a record of the rig's physics.
 *
 * An episode the fit must not learn from is not silently used: a cut-off file is refused naming
 * `tandem record recover`; an episode of another rig model, with safety interventions, or with
 * gaps in its joint states is *excluded with the reason* (`exclusion`), so a fit over a folder of
 * takes uses the good ones and says which it left out and why.
 *
 * What stood on the table: a take names its layout by the layout set's SHA-256 and the index (the
 * file does not hold the set). Given that set (`--layouts FILE`), the replay places the layout; a
 * take whose set is not given is refused naming the flag; a take whose layout the file does not
 * name at all (the emulated cell's default table) is left out.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { TypedMcapRecord } from '@mcap/core';
import {
  EPISODE_END_METADATA_NAME,
  EPISODE_METADATA_NAME,
  EVENT_KINDS,
  TOPICS,
} from '../../src/record/episode-format.js';
import { decodeMessage, EpisodeFileError, scanEpisodeFile } from '../../src/record/episode-file-reader.js';
import type { EpisodeEventMessage, JointStateMessage } from '../../src/record/ros2-messages.js';
import { STATE_DIM, type RigModel } from '../../src/rig/contract.js';
import { layoutAt, type LayoutSet } from '../../src/layouts/layout-set.js';
import type { Layout } from '../../src/tasks/types.js';
import { DEFAULT_HOLD_AFTER_MS } from '../../src/rig/safety.js';

/** An episode file sysid cannot read at all; the message is one sentence. */
export class SysidEpisodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SysidEpisodeError';
  }
}

/** Samples of one topic, times ascending (seconds from the file's first message), 14 values each. */
export interface JointSamples {
  readonly timesS: Float64Array;
  readonly position: Float64Array;
  readonly velocity: Float64Array;
  readonly effort: Float64Array;
}

export interface EpisodeTrajectory {
  readonly file: string;
  /** SHA-256 (hex) of the file's bytes: the lineage names episodes by it. */
  readonly sha256: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly states: JointSamples;
  readonly commands: JointSamples;
  /** Safety interventions recorded in the episode: time and kind. */
  readonly safetyEvents: readonly { readonly timeS: number; readonly kind: string }[];
  /** Replay from the first command at this time (s, the file's clock): after the take's last watchdog hold. Undefined: from its first command. */
  readonly replayFromS?: number;
  /** The layout that stood on the table (placed in the replay), or undefined for a clear table. */
  readonly table?: EpisodeTable;
  /** Why the fit must not use this episode (one sentence), or undefined. */
  readonly exclusion?: string;
}

export interface EpisodeTable {
  /** The task whose catalogue the layout's objects come from. */
  readonly task: string;
  readonly layout: Layout;
  /** The layout set's SHA-256 (what the file names). */
  readonly layoutSetSha256: string;
}

export interface ReadEpisodeOptions {
  /** Layout sets the takes' layouts may come from (a take names its set by SHA-256 only). */
  readonly layoutSets?: readonly LayoutSet[];
}

/**
 * The emulated cell steps its physics on the wall clock; behind it by more than this, the recorded
 * times no longer say when the arm did what (a real robot never lags its own physics). Its floor
 * on this machine, quiet, is a few ms.
 */
const MAX_EMULATION_LAG_MS = 20;

/**
 * Clamps change a command before it is applied, and the file records the command as applied: the
 * replay drives the arm with exactly what drove it. Every other intervention (hold, damp, e-stop,
 * a dropped command) moved the arm by something the file does not hold as a command.
 */
const RECORDED_CLAMPS = new Set(['position-clamped', 'velocity-clamped', 'torque-clamped']);

/**
 * A gap in the joint states (and commands) up to the safety supervisor's watchdog is replayable:
 * the motors ran on the last command, and so does the replay. Longer, the arm was held or damped
 * by something the file does not record as a command.
 */
const MAX_GAP_S = DEFAULT_HOLD_AFTER_MS / 1000;
/** A take replayed from after its watchdog holds needs at least this much left. */
const MIN_RESUMED_S = 4;

/** Reads an episode for sysid. Throws SysidEpisodeError for a file that cannot be read (cut off, not an episode). */
export async function readEpisodeTrajectory(
  file: string,
  model: RigModel,
  options: ReadEpisodeOptions = {},
): Promise<EpisodeTrajectory> {
  const schemas = new Map<number, string>();
  const channels = new Map<number, { topic: string; schema: string }>();
  let metadata: Record<string, string> = {};
  let end: Record<string, string> = {};
  const states = newCollector();
  const commands = newCollector();
  const safetyEvents: { timeS: number; kind: string }[] = [];
  let originNs: bigint | undefined;
  let scan;
  try {
    scan = await scanEpisodeFile(file, (r: TypedMcapRecord) => {
      if (r.type === 'Schema') {
        if (!schemas.has(r.id)) schemas.set(r.id, r.name);
      } else if (r.type === 'Channel') {
        if (!channels.has(r.id)) channels.set(r.id, { topic: r.topic, schema: schemas.get(r.schemaId) ?? '' });
      } else if (r.type === 'Metadata') {
        if (r.name === EPISODE_METADATA_NAME) metadata = Object.fromEntries(r.metadata);
        else if (r.name === EPISODE_END_METADATA_NAME) end = Object.fromEntries(r.metadata);
      } else if (r.type === 'Message') {
        const ch = channels.get(r.channelId);
        if (!ch) return;
        originNs ??= r.logTime;
        const t = Number(r.logTime - originNs) / 1e9;
        if (ch.topic === TOPICS.jointStates || ch.topic === TOPICS.jointCommands) {
          const m = decodeMessage(ch.schema, r.data) as JointStateMessage | undefined;
          if (m) push(ch.topic === TOPICS.jointStates ? states : commands, t, m, file);
        } else if (ch.topic === TOPICS.events) {
          const ev = decodeMessage(ch.schema, r.data) as EpisodeEventMessage | undefined;
          if (ev?.kind === ('safety' satisfies (typeof EVENT_KINDS)[number]))
            safetyEvents.push({ timeS: t, kind: safetyKind(ev) });
        }
      }
    });
  } catch (e) {
    if (e instanceof EpisodeFileError) throw new SysidEpisodeError(e.message);
    throw e;
  }
  if (!scan.complete) {
    throw new SysidEpisodeError(
      `${file} is cut off (${scan.problem}); recover its readable part first with \`tandem record recover ${file}\` and fit on the recovered file.`,
    );
  }
  if (states.times.length < 2 || commands.times.length < 2) {
    throw new SysidEpisodeError(
      `${file} holds ${states.times.length} joint states and ${commands.times.length} applied commands; a replay needs both, every control step.`,
    );
  }
  const s = finish(states);
  const c = finish(commands);
  const table = tableOf(file, metadata, options.layoutSets ?? []);
  const replayFromS = resumeAfterHolds(safetyEvents, c);
  const replayed = replayFromS === undefined ? safetyEvents : safetyEvents.filter((e) => e.timeS >= replayFromS);
  return {
    file,
    sha256: await fileSha256(file),
    metadata,
    states: s,
    commands: c,
    safetyEvents,
    table,
    replayFromS,
    exclusion: exclusionOf(file, metadata, end, model, s, replayed, replayFromS),
  };
}

/**
 * A take whose only interventions are watchdog holds (a policy's first plan outlasting the 100 ms
 * watchdog, say) is replayable after the last one: the hold ends with the next command the file
 * records, and from there what drove the arm is in the file again. Undefined when there is none,
 * or when less than MIN_RESUMED_S of commands follows.
 */
function resumeAfterHolds(
  safety: readonly { timeS: number; kind: string }[],
  commands: JointSamples,
): number | undefined {
  const taken = safety.filter((e) => !RECORDED_CLAMPS.has(e.kind));
  if (taken.length === 0 || taken.some((e) => e.kind !== 'watchdog-hold')) return undefined;
  const last = taken[taken.length - 1].timeS;
  const n = commands.timesS.length;
  let k = 0;
  while (k < n && commands.timesS[k] <= last) k++;
  return k < n && commands.timesS[n - 1] - commands.timesS[k] >= MIN_RESUMED_S ? commands.timesS[k] : undefined;
}

/**
 * The layout on the take's table: teleop takes say `table: layout`, rollouts (sim and rig) name a
 * layout set without saying `table`. Throws SysidEpisodeError when the take names a set not given.
 */
function tableOf(file: string, metadata: Record<string, string>, sets: readonly LayoutSet[]): EpisodeTable | undefined {
  const sha = metadata.layout_set_sha256 ?? '';
  const onTable = metadata.table === 'layout' || (metadata.table === undefined && sha !== '');
  if (!onTable) return undefined;
  const name = file.split('/').pop();
  const set = sets.find((x) => x.sha256 === sha);
  const index = Number(metadata.layout_index);
  if (!set) {
    throw new SysidEpisodeError(
      `${name} was recorded with layout ${metadata.layout_index || '?'} of layout set ${sha.slice(0, 12) || '(unnamed)'}… on the table, which the file names only by its SHA-256; give that set's file with --layouts FILE so the replay can place it.`,
    );
  }
  if (!Number.isInteger(index) || index < 0 || index >= set.layouts.length) {
    throw new SysidEpisodeError(
      `${name} names layout ${metadata.layout_index} of layout set ${sha.slice(0, 12)}…, which holds ${set.layouts.length}; it was not recorded with this set.`,
    );
  }
  return { task: set.task, layout: layoutAt(set, index), layoutSetSha256: sha };
}

function exclusionOf(
  file: string,
  metadata: Record<string, string>,
  end: Record<string, string>,
  model: RigModel,
  states: JointSamples,
  safety: readonly { timeS: number; kind: string }[],
  fromS = -Infinity,
): string | undefined {
  const name = file.split('/').pop();
  if (metadata.rig_model !== model.name) {
    return `${name} was recorded on rig model '${metadata.rig_model ?? 'unknown'}', not '${model.name}': its physics are another robot's.`;
  }
  if (metadata.table === 'cell-default') {
    return `${name} was recorded with the emulated cell's default layout on the table, which the file does not name, so the replay cannot place it; record with \`--layouts FILE --layout I\` (or \`--empty-table\`) for takes sysid can use.`;
  }
  const lag = Number(end.emulation_max_lag_ms);
  if (lag > MAX_EMULATION_LAG_MS) {
    return `${name} was recorded while the emulated cell fell up to ${lag.toFixed(0)} ms behind real time (the machine was too busy to keep it): its timing is not a robot's. Record it again on a quieter machine.`;
  }
  const taken = safety.filter((e) => !RECORDED_CLAMPS.has(e.kind));
  if (taken.length > 0) {
    const kinds = [...new Set(taken.map((e) => e.kind))].join(', ');
    return `${name} has ${taken.length} safety intervention${taken.length === 1 ? '' : 's'} that took the arm from its commands (${kinds}, first at ${taken[0].timeS.toFixed(2)} s): what the file records is not what drove the arm throughout.`;
  }
  let worst = 0;
  let at = 0;
  // Only what the replay covers: a take replayed after its watchdog holds may have a gap in them.
  for (let i = 1; i < states.timesS.length; i++) {
    if (states.timesS[i - 1] < fromS) continue;
    const d = states.timesS[i] - states.timesS[i - 1];
    if (d > worst) [worst, at] = [d, states.timesS[i - 1]];
  }
  if (worst > MAX_GAP_S) {
    return `${name} has a ${(worst * 1000).toFixed(0)} ms gap in its joint states at ${at.toFixed(2)} s (longer than the ${DEFAULT_HOLD_AFTER_MS} ms command watchdog): the replay cannot know what held the arm there.`;
  }
  return undefined;
}

function safetyKind(ev: EpisodeEventMessage): string {
  try {
    const d = JSON.parse(ev.detail_json) as { safety_kind?: unknown };
    return typeof d.safety_kind === 'string' ? d.safety_kind : 'safety';
  } catch {
    return 'safety';
  }
}

interface Collector {
  times: number[];
  position: number[];
  velocity: number[];
  effort: number[];
}

function newCollector(): Collector {
  return { times: [], position: [], velocity: [], effort: [] };
}

function push(c: Collector, t: number, m: JointStateMessage, file: string): void {
  if (m.position.length !== STATE_DIM)
    throw new SysidEpisodeError(
      `${file}: a joint message has ${m.position.length} positions, not the bimanual rig's ${STATE_DIM}; it is not an episode of this rig.`,
    );
  c.times.push(t);
  for (let j = 0; j < STATE_DIM; j++) {
    c.position.push(m.position[j]);
    c.velocity.push(m.velocity.length === STATE_DIM ? m.velocity[j] : 0);
    c.effort.push(m.effort.length === STATE_DIM ? m.effort[j] : 0);
  }
}

/** Sorted by time (written in call order, almost always already sorted). */
function finish(c: Collector): JointSamples {
  const n = c.times.length;
  const order = Array.from({ length: n }, (_, i) => i);
  if (c.times.some((t, i) => i > 0 && t < c.times[i - 1])) order.sort((a, b) => c.times[a] - c.times[b]);
  const out = {
    timesS: new Float64Array(n),
    position: new Float64Array(n * STATE_DIM),
    velocity: new Float64Array(n * STATE_DIM),
    effort: new Float64Array(n * STATE_DIM),
  };
  order.forEach((from, to) => {
    out.timesS[to] = c.times[from];
    for (let j = 0; j < STATE_DIM; j++) {
      out.position[to * STATE_DIM + j] = c.position[from * STATE_DIM + j];
      out.velocity[to * STATE_DIM + j] = c.velocity[from * STATE_DIM + j];
      out.effort[to * STATE_DIM + j] = c.effort[from * STATE_DIM + j];
    }
  });
  return out;
}

async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}
