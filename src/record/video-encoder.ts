/**
 * One mp4 per camera through an ffmpeg subprocess: the recorded JPEG frames go in on stdin as
 * an MJPEG image pipe at the dataset's fps, one frame per tick (a repeated frame is written
 * again), so frame n of the file is at n / fps exactly — the time LeRobot's decoders seek to.
 *
 * Codec: AV1 through libsvtav1 by default, with LeRobot's own settings (yuv420p, GOP 2, CRF 30):
 * what LeRobot writes and what its decoders are tuned for (a GOP of 2 keeps random access to any
 * frame cheap while training). `h264` (libx264, same GOP and CRF) is there for machines whose
 * decoders lack AV1.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';

export type VideoCodec = 'av1' | 'h264';

const ENCODERS: Record<VideoCodec, { encoder: string; args: string[]; probeName: string }> = {
  av1: { encoder: 'libsvtav1', args: ['-c:v', 'libsvtav1', '-g', '2', '-crf', '30'], probeName: 'av1' },
  h264: {
    encoder: 'libx264',
    args: ['-c:v', 'libx264', '-g', '2', '-crf', '30', '-preset', 'medium'],
    probeName: 'h264',
  },
};

export class VideoEncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VideoEncodeError';
  }
}

/** Checks that ffmpeg runs and has the codec's encoder; throws VideoEncodeError saying what to do. */
export function checkFfmpeg(ffmpeg: string, codec: VideoCodec): void {
  const r = spawnSync(ffmpeg, ['-hide_banner', '-encoders'], { encoding: 'utf8' });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    throw new VideoEncodeError(
      code === 'ENOENT'
        ? `ffmpeg was not found (${ffmpeg}): the export encodes each camera's frames to mp4 with it — install it (Debian: apt-get install ffmpeg) or export episodes without cameras.`
        : `ffmpeg (${ffmpeg}) could not be run: ${r.error.message}.`,
    );
  }
  const { encoder } = ENCODERS[codec];
  if (!new RegExp(`\\s${encoder}\\s`).test(r.stdout)) {
    throw new VideoEncodeError(
      `ffmpeg (${ffmpeg}) has no ${encoder} encoder for --codec ${codec}; install an ffmpeg built with it, or choose --codec ${codec === 'av1' ? 'h264' : 'av1'}.`,
    );
  }
}

/** The codec name ffprobe and LeRobot's info.json use for it. */
export function codecName(codec: VideoCodec): string {
  return ENCODERS[codec].probeName;
}

/** Width and height from a JPEG's start-of-frame marker, or undefined if it has none. */
export function jpegSize(data: Uint8Array): { width: number; height: number } | undefined {
  if (data[0] !== 0xff || data[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1];
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    const len = (data[i + 2] << 8) | data[i + 3];
    // SOF0..SOF15 carry the size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (data[i + 5] << 8) | data[i + 6], width: (data[i + 7] << 8) | data[i + 8] };
    }
    i += 2 + len;
  }
  return undefined;
}

/** An ffmpeg process encoding one camera's frames into one mp4. */
export class VideoEncoder {
  private readonly child: ChildProcessWithoutNullStreams;
  private stderr = '';
  private readonly exited: Promise<number | null>;
  private spawnError: Error | undefined;
  frames = 0;

  constructor(
    ffmpeg: string,
    readonly file: string,
    readonly fps: number,
    codec: VideoCodec,
  ) {
    this.child = spawn(
      ffmpeg,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-nostdin',
        '-f',
        'image2pipe',
        '-framerate',
        String(fps),
        '-c:v',
        'mjpeg',
        '-i',
        'pipe:0',
        // yuv420p needs even sizes; a camera with an odd size loses its last row or column.
        '-vf',
        'crop=trunc(iw/2)*2:trunc(ih/2)*2',
        ...ENCODERS[codec].args,
        '-pix_fmt',
        'yuv420p',
        '-an',
        '-f',
        'mp4',
        '-n',
        file,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    this.child.stdout.resume();
    this.child.on('error', (e) => (this.spawnError = e));
    // An encoder that died makes stdin throw EPIPE; the exit code and stderr say why.
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  /** Writes one JPEG frame; waits when ffmpeg's pipe is full. */
  async write(jpeg: Uint8Array): Promise<void> {
    if (this.child.exitCode !== null || this.spawnError) throw this.failure();
    this.frames += 1;
    if (!this.child.stdin.write(jpeg)) {
      await Promise.race([once(this.child.stdin, 'drain'), this.exited]);
      if (this.child.exitCode !== null) throw this.failure();
    }
  }

  private failure(): VideoEncodeError {
    const why =
      this.spawnError?.message ??
      this.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('Svt['))
        .slice(-3)
        .join(' ') ??
      '';
    return new VideoEncodeError(
      `ffmpeg failed while encoding ${this.file}: ${why || `exit code ${this.child.exitCode}`}.`,
    );
  }

  /** Ends the stream and waits for ffmpeg to finish the file. */
  async finish(): Promise<void> {
    this.child.stdin.end();
    const code = await this.exited;
    if (code !== 0 || this.spawnError) throw this.failure();
  }

  /** Stops ffmpeg (on an error elsewhere); its half-written file goes with the partial folder. */
  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}
