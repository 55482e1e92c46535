import type { ProjectorState } from './api-types.js';

/** What the server knows of the projector: the composition root's feed of frames (it renders them). */
export interface ProjectorFeed {
  state(): ProjectorState;
  /** The PNG on the table now: black before the first frame. */
  frame(): Buffer;
  /** Called with every new frame's state (the server sends it on the event stream). */
  onChange(listener: (state: ProjectorState) => void): void;
}
