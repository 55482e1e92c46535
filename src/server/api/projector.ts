/**
 * The projector: what the session's layout footprints on the table look like to the station. Pure
 * (no Node built-ins): the server and the operator UI share it; src/server/api-types.ts gathers
 * every feature.
 */

/** The last projector frame's PNG (black when none has gone out yet). */
export const PROJECTOR_FRAME_PATH = '/api/projector/frame.png';

/** The page a browser on the projector's display shows full screen (the Electron shell has its own window). */
export const PROJECTOR_PAGE_PATH = '/projector';

export interface ProjectorState {
  /** False when the station was started without a projector calibration: nothing is projected. */
  readonly configured: boolean;
  /** The projector and its calibration, or what to do to get one, in words. */
  readonly description: string;
  /** Counts frames; the page reloads the frame when it changes. 0 = nothing shown yet. */
  readonly seq: number;
  /** What is on the table now: a layout's footprints, black, or nothing sent yet. */
  readonly showing: 'layout' | 'black' | 'nothing';
  readonly layoutSetSha256: string | null;
  readonly layoutIndex: number | null;
  /** The last PJLink trouble (the frame went out, the projector may not show it), or null. */
  readonly problem: string | null;
}
