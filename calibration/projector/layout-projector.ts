/**
 * The projector as the session engine sees it: show a layout's footprints, blank. Renders with
 * the calibration, sends frames to an output, and (when a projector is on the network) uses
 * PJLink AV mute so a blank is truly dark — a black frame still leaks the lamp's grey.
 *
 * PJLink trouble does not throw: the frame has been sent either way, so the result carries the
 * problem as an operator sentence for the session to show (a frame on a muted projector is
 * invisible; the operator has to know).
 */
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import type { ProjectorCalibration } from './calibration-record.js';
import type { ProjectorOutput } from './outputs.js';
import { projectedLayoutSvg, type ProjectionOptions } from './projection-svg.js';
import { blankPng, svgToPng } from './render.js';

/** What LayoutProjector needs of a projector's network control (PjlinkClient in drivers/projector has it). */
export interface ProjectorControl {
  setAvMute(muted: boolean): Promise<void>;
}

export interface ProjectorResult {
  /** Set when projector control failed: what happened and what to do, one sentence. */
  readonly problem?: string;
}

export interface LayoutProjectorOptions {
  readonly calibration: ProjectorCalibration;
  readonly output: ProjectorOutput;
  readonly control?: ProjectorControl;
  readonly projection?: ProjectionOptions;
}

export class LayoutProjector {
  readonly calibration: ProjectorCalibration;
  private readonly output: ProjectorOutput;
  private readonly control: ProjectorControl | undefined;
  private readonly projection: ProjectionOptions;

  constructor(opts: LayoutProjectorOptions) {
    this.calibration = opts.calibration;
    this.output = opts.output;
    this.control = opts.control;
    this.projection = opts.projection ?? {};
  }

  /** Shows layout `index` of `set` as footprints on the table, then unmutes the projector. */
  async show(set: LayoutSet, index: number): Promise<ProjectorResult> {
    const png = await svgToPng(projectedLayoutSvg(set, index, this.calibration, this.projection));
    await this.output.show({
      png,
      kind: 'layout',
      layoutSetSha256: set.sha256,
      layoutIndex: index,
      calibrationSha256: this.calibration.sha256,
    });
    return this.mute(false);
  }

  /** All black, and AV mute on: before every rollout, so no pattern reaches the cameras. */
  async blank(): Promise<ProjectorResult> {
    await this.output.show({
      png: await blankPng(this.calibration.resolution),
      kind: 'blank',
      calibrationSha256: this.calibration.sha256,
    });
    return this.mute(true);
  }

  private async mute(muted: boolean): Promise<ProjectorResult> {
    if (!this.control) return {};
    try {
      await this.control.setAvMute(muted);
      return {};
    } catch (e) {
      return {
        problem: `${muted ? 'The blank frame is up but the projector could not be muted' : 'The layout frame is sent but the projector could not be unmuted, so it may not show'}: ${(e as Error).message}`,
      };
    }
  }
}
