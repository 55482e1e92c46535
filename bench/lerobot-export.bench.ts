/**
 * How long `tandem record export --format lerobot` takes per second of episode, at the sizes the
 * station records: both arms at 250 Hz, three cameras at 30 fps 640×480 MJPEG from ffmpeg's
 * testsrc. The anchor is LeRobot's recorder before its streaming encoder: 30–40 s of encoding per
 * 15 s episode (2–2.7 s per episode second); after it, saving is near-instant but drops frames
 * when its queue fills. The export encodes every frame (none dropped) and runs after the
 * recording, never between episodes.
 *   npm run bench -- lerobot-export [-- --seconds 20]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { EpisodeRecorder } from '../src/record/episode-recorder.js';
import { exportLeRobot } from '../src/record/lerobot-export.js';
import type { VideoCodec } from '../src/record/video-encoder.js';
import { yamRigModel } from '../src/rig/yam.js';

const arg = process.argv.indexOf('--seconds');
const seconds = arg > 0 ? Number(process.argv[arg + 1]) : 20;
const CAMERAS = ['cam_high', 'cam_left_wrist', 'cam_right_wrist'];

function dirSizeMB(dir: string): number {
  let bytes = 0;
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else bytes += s.size;
    }
  };
  walk(dir);
  return bytes / 1048576;
}

const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-export-'));
try {
  const frameCount = Math.round(seconds * 30);
  const r = spawnSync('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=640x480:rate=30',
    '-frames:v',
    String(frameCount),
    '-c:v',
    'mjpeg',
    '-q:v',
    '5',
    join(dir, 'f%05d.jpg'),
  ]);
  if (r.status !== 0) throw new Error(`ffmpeg testsrc failed: ${String(r.stderr)}`);
  const jpegs = readdirSync(dir)
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .map((f) => readFileSync(join(dir, f)));

  const file = join(dir, 'episode.mcap');
  const rec = await EpisodeRecorder.open({
    file,
    rigModel: yamRigModel(),
    cameras: CAMERAS.map((name) => ({
      name,
      source: 'ffmpeg testsrc',
      width: 640,
      height: 480,
      fps: 30,
      format: 'jpeg' as const,
    })),
    metadata: { prompt: 'put the bottles in the bin' },
    unixOffsetS: 1_764_590_000,
  });
  const steps = seconds * 250;
  let frame = 0;
  for (let i = 0; i < steps; i++) {
    const t = i / 250;
    const position = Float64Array.from({ length: 14 }, (_, j) => Math.sin(t + j));
    rec.jointState({
      timeS: t,
      mode: 'active',
      position,
      velocity: new Float64Array(14),
      effort: new Float64Array(14),
      faults: [],
    });
    rec.command(t + 0.0005, { position });
    while (frame < jpegs.length && 0.01 + frame / 30 <= t) {
      CAMERAS.forEach((camera, c) =>
        rec.image({
          camera,
          seq: frame,
          arrivalS: 0.01 + frame / 30 + 0.001 * c,
          format: 'jpeg',
          width: 640,
          height: 480,
          data: jpegs[frame],
        }),
      );
      frame += 1;
    }
    if (i % 250 === 0) await rec.drain();
  }
  await rec.close();
  const episodeMB = statSync(file).size / 1048576;
  console.log(
    `episode: ${seconds} s, 250 Hz joints, ${CAMERAS.length} cameras × ${frame} frames 640×480 MJPEG, ${episodeMB.toFixed(1)} MiB; ${cpus().length} cores`,
  );
  console.log(
    'codec  export s  s per episode s  dataset MiB   (anchor: LeRobot before streaming encoding, 2–2.7 s per episode s)',
  );
  for (const codec of ['av1', 'h264'] as VideoCodec[]) {
    const out = join(dir, `ds-${codec}`);
    const t0 = performance.now();
    const report = await exportLeRobot({ episodes: [file], out, codec });
    const s = (performance.now() - t0) / 1000;
    console.log(
      `${codec.padEnd(5)}  ${s.toFixed(1).padStart(8)}  ${(s / seconds).toFixed(2).padStart(15)}  ${dirSizeMB(out).toFixed(1).padStart(11)}   (${report.totalFrames} frames)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
