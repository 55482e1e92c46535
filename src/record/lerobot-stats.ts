/**
 * Feature statistics as LeRobot computes them (lerobot/datasets/compute_stats.py), because
 * training normalises with them: per episode min, max, mean, std (population) and count over the
 * episode's frames, per dimension; the dataset's stats are the episodes' aggregated with the
 * parallel-variance formula (the same numbers as over all frames at once).
 *
 * Images: LeRobot samples an episode's frames (100 for up to ~500 frames, then length^0.75, at
 * most 10 000, evenly spaced), strides large images down to about 150 px (every
 * int(width / 150)-th pixel once the larger side is ≥ 300), and keeps per-channel stats over all
 * pixels of the sample, scaled to [0, 1], shaped (3, 1, 1); count is the number of sampled frames.
 */

export interface FeatureStats {
  readonly min: number[];
  readonly max: number[];
  readonly mean: number[];
  readonly std: number[];
  readonly count: number;
}

/** Stats of `rows` rows of `width` values each (row-major). */
export function vectorStats(values: ArrayLike<number>, rows: number, width: number): FeatureStats {
  const min = new Array<number>(width).fill(Infinity);
  const max = new Array<number>(width).fill(-Infinity);
  const sum = new Array<number>(width).fill(0);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < width; j++) {
      const v = values[r * width + j];
      if (v < min[j]) min[j] = v;
      if (v > max[j]) max[j] = v;
      sum[j] += v;
    }
  }
  const mean = sum.map((s) => s / rows);
  const sq = new Array<number>(width).fill(0);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < width; j++) {
      const d = values[r * width + j] - mean[j];
      sq[j] += d * d;
    }
  }
  return { min, max, mean, std: sq.map((s) => Math.sqrt(s / rows)), count: rows };
}

/** LeRobot's aggregate_feature_stats: dataset stats from per-episode stats. */
export function aggregateStats(parts: readonly FeatureStats[]): FeatureStats {
  const total = parts.reduce((a, p) => a + p.count, 0);
  const width = parts[0].mean.length;
  const mean = new Array<number>(width).fill(0);
  for (const p of parts) for (let j = 0; j < width; j++) mean[j] += (p.mean[j] * p.count) / total;
  const variance = new Array<number>(width).fill(0);
  for (const p of parts) {
    for (let j = 0; j < width; j++) {
      const d = p.mean[j] - mean[j];
      variance[j] += ((p.std[j] ** 2 + d * d) * p.count) / total;
    }
  }
  return {
    min: mean.map((_, j) => Math.min(...parts.map((p) => p.min[j]))),
    max: mean.map((_, j) => Math.max(...parts.map((p) => p.max[j]))),
    mean,
    std: variance.map(Math.sqrt),
    count: total,
  };
}

/** How many frames LeRobot samples from an episode of `length` frames (estimate_num_samples). */
export function imageSampleCount(length: number): number {
  const minSamples = Math.min(100, length);
  return Math.max(minSamples, Math.min(Math.floor(length ** 0.75), 10_000));
}

/** Which frames it samples: evenly spaced from first to last, rounded half to even as numpy does. */
export function imageSampleTicks(length: number): number[] {
  const n = imageSampleCount(length);
  if (n <= 1) return n === 1 ? [0] : [];
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = ((length - 1) * i) / (n - 1);
    const f = Math.floor(x);
    const r = x - f === 0.5 ? (f % 2 === 0 ? f : f + 1) : Math.round(x);
    out.push(r);
  }
  return out;
}

/** Accumulates per-channel pixel stats of sampled JPEG frames. */
export class ImageStatsAccumulator {
  private readonly min = [Infinity, Infinity, Infinity];
  private readonly max = [-Infinity, -Infinity, -Infinity];
  private readonly sum = [0, 0, 0];
  private readonly sumSq = [0, 0, 0];
  private pixels = 0;
  private frames = 0;

  /** Adds one decoded frame `times` times (a repeated frame sampled twice counts twice). */
  async add(jpeg: Uint8Array, times = 1): Promise<void> {
    const { default: sharp } = await import('sharp');
    const { data, info } = await sharp(jpeg)
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { width, height, channels } = info;
    const step = Math.max(width, height) < 300 ? 1 : Math.floor((width > height ? width : height) / 150);
    for (let y = 0; y < height; y += step) {
      for (let x = 0; x < width; x += step) {
        const p = (y * width + x) * channels;
        for (let c = 0; c < 3; c++) {
          const v = data[p + (channels === 1 ? 0 : c)];
          if (v < this.min[c]) this.min[c] = v;
          if (v > this.max[c]) this.max[c] = v;
          this.sum[c] += v * times;
          this.sumSq[c] += v * v * times;
        }
        this.pixels += times;
      }
    }
    this.frames += times;
  }

  /** Stats scaled to [0, 1]; `count` is the number of sampled frames, as LeRobot counts. */
  stats(): FeatureStats {
    const mean = this.sum.map((s) => s / this.pixels);
    const std = this.sumSq.map((s, c) => Math.sqrt(Math.max(0, s / this.pixels - mean[c] ** 2)));
    return {
      min: this.min.map((v) => v / 255),
      max: this.max.map((v) => v / 255),
      mean: mean.map((v) => v / 255),
      std: std.map((v) => v / 255),
      count: this.frames,
    };
  }
}

/** JSON form LeRobot writes: vectors as lists, images as (3, 1, 1), count as [n]. */
export function statsJson(s: FeatureStats, image: boolean): Record<string, unknown> {
  const shape = (v: number[]): unknown => (image ? v.map((x) => [[x]]) : v);
  return { min: shape(s.min), max: shape(s.max), mean: shape(s.mean), std: shape(s.std), count: [s.count] };
}
