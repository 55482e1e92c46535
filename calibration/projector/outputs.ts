/**
 * Where projector frames go. The station's Electron projector window is one target (built
 * with the station); here: a PNG file a viewer can watch, a folder of numbered frames, and
 * memory for tests. A target only receives finished PNG frames, so any of them can stand in for
 * another.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface ProjectorFrame {
  readonly png: Buffer;
  /** 'layout' (footprints of one layout), 'blank' (all black) or 'crosshairs'. */
  readonly kind: 'layout' | 'blank' | 'crosshairs';
  /** For layout frames: the set's hash and the layout index. */
  readonly layoutSetSha256?: string;
  readonly layoutIndex?: number;
  readonly calibrationSha256?: string;
}

export interface ProjectorOutput {
  show(frame: ProjectorFrame): Promise<void>;
}

/** One PNG file, replaced whole each frame (temp file + rename), so a watcher never reads half a frame. */
export class PngFileOutput implements ProjectorOutput {
  constructor(readonly file: string) {}
  async show(frame: ProjectorFrame): Promise<void> {
    const tmp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(tmp, frame.png);
    renameSync(tmp, this.file);
  }
}

/** Every frame as its own numbered PNG in a folder: a record of what was shown, in order. */
export class PngDirectoryOutput implements ProjectorOutput {
  private count = 0;
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }
  async show(frame: ProjectorFrame): Promise<void> {
    this.count += 1;
    const what = frame.kind === 'layout' ? `layout-${frame.layoutIndex ?? 'x'}` : frame.kind;
    const file = join(this.dir, `frame-${String(this.count).padStart(6, '0')}-${what}.png`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, frame.png);
  }
}

/** Keeps frames in memory: what tests look at. */
export class MemoryOutput implements ProjectorOutput {
  readonly frames: ProjectorFrame[] = [];
  async show(frame: ProjectorFrame): Promise<void> {
    this.frames.push(frame);
  }
  get last(): ProjectorFrame | undefined {
    return this.frames.at(-1);
  }
}
