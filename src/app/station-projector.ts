/**
 * The station's projector: the session engine's projector port (footprints of the next layout,
 * black before every rollout) rendered with the calibration the station was started with, its
 * frames kept for the station API — the /projector page a browser shows full screen on the
 * projector's display, and the Electron shell's projector window. Without a calibration nothing
 * is projected and the state says how to get one.
 */
import type { ProjectorState } from '../server/api-types.js';
import type { ProjectorFeed } from '../server/projector-feed.js';
import type { SessionProjector } from '../session/ports.js';
import type { Store } from '../store/store.js';
import { LayoutProjector } from '../../calibration/projector/layout-projector.js';
import type { ProjectorFrame, ProjectorOutput } from '../../calibration/projector/outputs.js';
import { blankPng } from '../../calibration/projector/render.js';
import { calibrationStoreInput } from '../../calibration/projector/calibration-record.js';
import { pjlinkClient, readCalibrationFile } from './commands/projector.js';
import { sessionProjector } from './session-projector.js';
import { UserError } from './command.js';

/** Frames as they go out, for whoever shows them; the state the UI reads. */
export class StationProjectorFeed implements ProjectorOutput, ProjectorFeed {
  private current: ProjectorState;
  private png: Buffer;
  private readonly listeners: ((s: ProjectorState) => void)[] = [];

  private constructor(description: string, configured: boolean, black: Buffer) {
    this.png = black;
    this.current = {
      configured,
      description,
      seq: 0,
      showing: 'nothing',
      layoutSetSha256: null,
      layoutIndex: null,
      problem: null,
    };
  }

  static async create(
    description: string,
    configured: boolean,
    resolution = { widthPx: 64, heightPx: 36 },
  ): Promise<StationProjectorFeed> {
    return new StationProjectorFeed(description, configured, await blankPng(resolution));
  }

  async show(frame: ProjectorFrame): Promise<void> {
    this.png = frame.png;
    const layout = frame.kind === 'layout';
    this.current = {
      ...this.current,
      problem: null,
      seq: this.current.seq + 1,
      showing: layout ? 'layout' : 'black',
      layoutSetSha256: layout ? (frame.layoutSetSha256 ?? null) : null,
      layoutIndex: layout ? (frame.layoutIndex ?? null) : null,
    };
    this.changed();
  }

  describe(description: string): void {
    this.current = { ...this.current, description };
  }

  /** PJLink trouble after a frame went out (a new frame clears it). */
  problem(text: string): void {
    if (this.current.problem === text) return;
    this.current = { ...this.current, problem: text };
    this.changed();
  }

  state(): ProjectorState {
    return this.current;
  }

  frame(): Buffer {
    return this.png;
  }

  onChange(listener: (s: ProjectorState) => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l(this.current);
  }
}

export interface StationProjectorOptions {
  /** A calibration from 'tandem projector calibrate'; without one the station projects nothing. */
  readonly calibrationFile?: string;
  /** HOST[:PORT] of a PJLink projector to AV-mute for every blank (password: $TANDEM_PJLINK_PASSWORD). */
  readonly pjlink?: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly store: Store;
  /** Operator lines (PJLink trouble). */
  readonly say: (line: string) => void;
}

export interface StationProjector {
  readonly feed: StationProjectorFeed;
  /** The session engine's port; undefined without a calibration (the engine's NO_PROJECTOR then). */
  readonly session?: SessionProjector;
  /** The calibration it projects with. */
  readonly calibration?: { readonly version: number; readonly sha256: string };
}

/** Reads the calibration (stored, as a session's CLI does) and builds the feed; a bad file is one UserError sentence. */
export async function openStationProjector(o: StationProjectorOptions): Promise<StationProjector> {
  if (o.calibrationFile === undefined) {
    if (o.pjlink !== undefined)
      throw new UserError('--pjlink needs --projector-calibration FILE (the table-to-projector calibration).');
    return {
      feed: await StationProjectorFeed.create(
        "no projector: calibrate one with 'tandem projector calibrate', then start the station with --projector-calibration FILE",
        false,
      ),
    };
  }
  const calibration = await readCalibrationFile(o, o.calibrationFile);
  o.store.putCalibration(calibrationStoreInput(calibration));
  const control = o.pjlink !== undefined ? pjlinkClient(o.pjlink, o.env) : undefined;
  const where = `${calibration.resolution.widthPx}×${calibration.resolution.heightPx}${control ? ` with PJLink at ${o.pjlink}` : ''}`;
  const feed = await StationProjectorFeed.create('', true, calibration.resolution);
  const projector = new LayoutProjector({ calibration, output: feed, ...(control ? { control } : {}) });
  const session = sessionProjector(projector, where, (line) => {
    feed.problem(line);
    o.say(line);
  });
  // In the session port's own words (calibration hash and RMS error).
  feed.describe(session.description);
  return { feed, session, calibration: { version: calibration.version, sha256: calibration.sha256 } };
}
