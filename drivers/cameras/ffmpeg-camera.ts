/**
 * A Camera fed by an ffmpeg subprocess (Debian's /usr/bin/ffmpeg) writing MJPEG to its stdout:
 * - `v4l2`: a USB/UVC camera's own MJPEG frames, copied as the camera compressed them
 *   (`-f v4l2 -input_format mjpeg … -c:v copy`): no re-encoding on the recording path.
 * - `testsrc`: ffmpeg's synthetic pattern (testsrc2 by default) encoded to MJPEG in real time
 *   (`-re`), through the same pipe, splitter and bookkeeping — so tests exercise the real path.
 * Frames are stamped when their last byte is read from the pipe, on the station clock given.
 *
 * Dropped frames: ffmpeg reports its progress on fd 3 (`-progress pipe:3`): the frames it wrote
 * and the timestamp of the newest. The source's own timestamps (the V4L2 driver's buffer times,
 * or the pattern's) say how many frames there should have been; the difference is what the device
 * or ffmpeg lost. There is no queue between the pipe and the listeners (they are called as each
 * frame arrives), so a slow station does not drop frames here: it backs up the pipe, ffmpeg and
 * then the camera's kernel buffers, whose overflow shows up as exactly such a timestamp gap.
 * Broken frames the splitter throws away count as dropped too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { CameraOpenError, StreamingCamera, type StreamingCameraOptions } from '../../src/rig/streaming-camera.js';
import type { FfmpegCameraConfig } from './camera-config.js';
import { JpegSplitter } from './jpeg-splitter.js';

export const DEFAULT_FFMPEG_PATH = '/usr/bin/ffmpeg';
/** A stopping ffmpeg gets this long after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2000;
const STDERR_LINES_KEPT = 12;

export interface FfmpegCameraOptions extends StreamingCameraOptions {
  /** Default $TANDEM_FFMPEG or /usr/bin/ffmpeg. */
  readonly ffmpegPath?: string;
  /** testsrc only: which lavfi pattern. Default testsrc2. */
  readonly pattern?: 'testsrc' | 'testsrc2';
  /** testsrc only: MJPEG quantiser (2 best … 31 worst). Default 5. */
  readonly quality?: number;
  /**
   * testsrc only: a lavfi filter chain appended to the pattern, e.g. "select='not(between(n,20,29))'"
   * to make a source that loses frames as a failing camera does (its timestamps keep the gap).
   */
  readonly sourceFilter?: string;
}

/** The ffmpeg arguments for a camera (exported so docs and tests can show the exact command). */
export function ffmpegArgs(
  config: FfmpegCameraConfig,
  options: Pick<FfmpegCameraOptions, 'pattern' | 'quality' | 'sourceFilter'> = {},
): string[] {
  const common = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:3', '-stats_period', '0.5'];
  const size = `${config.width}x${config.height}`;
  if (config.kind === 'v4l2') {
    return [
      ...common,
      '-f',
      'v4l2',
      '-input_format',
      'mjpeg',
      '-video_size',
      size,
      '-framerate',
      String(config.fps),
      '-i',
      config.device!,
      '-c:v',
      'copy',
      '-f',
      'mjpeg',
      'pipe:1',
    ];
  }
  const source = `${options.pattern ?? 'testsrc2'}=size=${size}:rate=${config.fps}${options.sourceFilter ? `,${options.sourceFilter}` : ''}`;
  return [
    ...common,
    '-re',
    '-f',
    'lavfi',
    '-i',
    source,
    // Keep the source's timestamps (and so its gaps): no frame duplication to a constant rate.
    '-fps_mode',
    'passthrough',
    '-c:v',
    'mjpeg',
    '-pix_fmt',
    'yuvj420p',
    '-q:v',
    String(options.quality ?? 5),
    '-f',
    'mjpeg',
    'pipe:1',
  ];
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

export class FfmpegCamera extends StreamingCamera {
  private readonly ffmpegPath: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopRequested = false;
  private stderrTail: string[] = [];
  private sourceDrops = 0;
  /** The loss the previous progress report showed (see onProgress). */
  private lastReportedLoss = 0;
  private brokenFrames = 0;

  constructor(
    readonly config: FfmpegCameraConfig,
    private readonly options: FfmpegCameraOptions = {},
  ) {
    super(
      {
        name: config.name,
        source: config.kind === 'v4l2' ? `v4l2 ${config.device}` : `ffmpeg ${options.pattern ?? 'testsrc2'}`,
        width: config.width,
        height: config.height,
        fps: config.fps,
        format: 'jpeg',
      },
      options,
    );
    this.ffmpegPath = options.ffmpegPath ?? process.env.TANDEM_FFMPEG ?? DEFAULT_FFMPEG_PATH;
  }

  /** The running ffmpeg's process id (undefined when none runs). */
  get pid(): number | undefined {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  protected startSource(): void {
    if (!existsSync(this.ffmpegPath)) {
      throw new CameraOpenError(
        `Camera ${this.label} needs ffmpeg at ${this.ffmpegPath}, which is not there: install it with "apt-get install ffmpeg" (or point TANDEM_FFMPEG at it).`,
      );
    }
    const device = this.config.device;
    if (this.config.kind === 'v4l2' && device && !existsSync(device)) {
      throw new CameraOpenError(
        `Camera ${this.config.name}: there is no video device ${device}; check that the camera is plugged in (ls /dev/video*, v4l2-ctl --list-devices) and that its config names the right device.`,
      );
    }
    this.stopRequested = false;
    this.stderrTail = [];
    this.sourceDrops = 0;
    this.lastReportedLoss = 0;
    this.brokenFrames = 0;
    const splitter = new JpegSplitter();
    const child = spawn(this.ffmpegPath, ffmpegArgs(this.config, this.options), {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    let resolveExit!: () => void;
    this.exited = new Promise<void>((r) => (resolveExit = r));
    child.on('error', (e: NodeJS.ErrnoException) => {
      // spawn failed (the file vanished, not executable): no 'exit' follows.
      this.failOpen(
        new CameraOpenError(
          `Camera ${this.label} could not start ffmpeg (${this.ffmpegPath}): ${e.code ?? e.message}; install it with "apt-get install ffmpeg".`,
        ),
      );
      resolveExit();
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      const arrivalS = this.nowS();
      for (const f of splitter.push(chunk)) {
        if (!this.deliver('jpeg', f.width, f.height, f.data, arrivalS)) break;
      }
      if (splitter.discardedFrames > this.brokenFrames) {
        this.addDropped(splitter.discardedFrames - this.brokenFrames);
        this.brokenFrames = splitter.discardedFrames;
      }
    });
    lines(child.stderr!, (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > STDERR_LINES_KEPT) this.stderrTail.shift();
    });
    const progress: Record<string, string> = {};
    lines(child.stdio[3] as Readable, (line) => {
      const eq = line.indexOf('=');
      if (eq < 0) return;
      const key = line.slice(0, eq);
      progress[key] = line.slice(eq + 1).trim();
      if (key === 'progress' && progress.progress === 'continue')
        this.onProgress(Number(progress.frame), Number(progress.out_time_us));
    });
    child.on('close', (code, signal) => {
      resolveExit();
      if (this.stopRequested) return;
      const said = this.ffmpegSaid();
      if (this.status === 'opening') this.failOpen(this.openError(said, code, signal));
      else
        this.lose(
          `camera ${this.label} stopped: its ffmpeg process ended (${describeExit(code, signal)})${said ? `; ffmpeg said: ${said}` : ''}; the episode goes on without it`,
        );
    });
  }

  protected async stopSource(): Promise<void> {
    this.stopRequested = true;
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      // A stopped (SIGSTOP, frozen) ffmpeg only acts on SIGTERM once it runs again.
      child.kill('SIGCONT');
      const hard = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      await this.exited;
      clearTimeout(hard);
    }
    await this.exited;
    this.child = undefined;
  }

  /** ffmpeg wrote `frames` so far, the newest stamped `outTimeUs` after the first: the gap is lost frames. */
  private onProgress(frames: number, outTimeUs: number): void {
    if (!Number.isFinite(frames) || !Number.isFinite(outTimeUs) || frames <= 0) return;
    const expected = Math.round((outTimeUs / 1e6) * this.config.fps) + 1;
    // A loss counts once two reports in a row show it. ffmpeg's frame count and its output time come
    // from different threads, and on a busy machine one report can have the time one frame ahead of
    // the count (seen: "dropped 1" from a pattern that lost nothing); a real loss leaves a gap in the
    // timestamps that every later report shows.
    const shown = expected - frames;
    const lost = Math.min(shown, this.lastReportedLoss);
    this.lastReportedLoss = shown;
    if (lost > this.sourceDrops) {
      this.addDropped(lost - this.sourceDrops);
      this.sourceDrops = lost;
    }
  }

  private ffmpegSaid(): string {
    // The last lines carry the cause; the first line names the demuxer instance (noise).
    return this.stderrTail
      .map((l) => l.replace(/^\[[^\]]*\]\s*/, '').trim())
      .filter((l) => l.length > 0)
      .slice(-2)
      .join(' / ');
  }

  private openError(said: string, code: number | null, signal: NodeJS.Signals | null): CameraOpenError {
    const device = this.config.device ?? '';
    const why = said || describeExit(code, signal);
    if (this.config.kind === 'v4l2') {
      if (/No such file or directory/i.test(said)) {
        return new CameraOpenError(
          `Camera ${this.config.name}: there is no video device ${device}; check that the camera is plugged in (ls /dev/video*, v4l2-ctl --list-devices) and that its config names the right device.`,
        );
      }
      if (/Inappropriate ioctl|Not a video capture device|not a capture device/i.test(said)) {
        return new CameraOpenError(
          `Camera ${this.config.name}: ${device} is not a video capture device; point the config at the camera's capture node (v4l2-ctl --list-devices lists them).`,
        );
      }
      if (/busy/i.test(said))
        return new CameraOpenError(
          `Camera ${this.config.name}: ${device} is in use by another program; close it (fuser ${device} names it) and open the camera again.`,
        );
      if (/Permission denied/i.test(said))
        return new CameraOpenError(
          `Camera ${this.config.name}: no permission to open ${device}; add the station's user to the 'video' group.`,
        );
    }
    return new CameraOpenError(
      `Camera ${this.label} could not start (${this.config.width}×${this.config.height} at ${this.config.fps} fps): ffmpeg said: ${why}.`,
    );
  }
}

/** Calls `onLine` for each text line of a stream. */
function lines(stream: Readable, onLine: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (s: string) => {
    rest += s;
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      onLine(rest.slice(0, nl).replace(/\r$/, ''));
      rest = rest.slice(nl + 1);
    }
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
    rest = '';
  });
}
