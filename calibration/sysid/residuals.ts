/**
 * Residual vectors and RMS errors from replay replies: what the fit descends on and what its
 * reports print.
 */
import { basename } from 'node:path';
import { ARM_JOINT_INDICES, HOLDING_JOINT_INDICES, type ReplayPhase } from './replay.js';
import type { ReplayReply } from './replay-pool.js';

/** RMS over the pitch joints (what the objects' fit reads) of the holding samples of the held-out replays (start record, fitted), or undefined when none holds anything. */
export function holdingRms(
  before: readonly ReplayReply[],
  after: readonly ReplayReply[],
): { samples: number; before: number; after: number } | undefined {
  const b = phaseRms(before, 'holding', HOLDING_JOINT_INDICES);
  return b.samples > 0
    ? { samples: b.samples, before: b.rmsRad, after: phaseRms(after, 'holding', HOLDING_JOINT_INDICES).rmsRad }
    : undefined;
}

/** One phase's samples over the replies, and their RMS over the given joints (default the arm joints). */
export function phaseRms(
  replies: readonly ReplayReply[],
  phase: ReplayPhase,
  joints: readonly number[] = ARM_JOINT_INDICES,
): { samples: number; rmsRad: number } {
  let samples = 0;
  let sq = 0;
  for (const r of replies) {
    const b = r.byPhase?.[phase];
    if (!b || b.samples === 0) continue;
    samples += b.samples;
    for (const j of joints) sq += b.rmsRad[j] ** 2 * b.samples;
  }
  return { samples, rmsRad: samples > 0 ? Math.sqrt(sq / (samples * joints.length)) : NaN };
}

/**
 * One evaluation's residuals, episode after episode; undefined when a replay failed or nothing was
 * compared. An episode with no samples of the phase (a rollout that grasps right after the
 * burn-in has no free motion in the window) adds none: the phases come from the measurements, so
 * it adds none at every point, and the vector keeps its length.
 */
export function concatResiduals(
  replies: readonly ReplayReply[],
  which: 'residuals' | 'holdingResiduals' = 'residuals',
): Float64Array | undefined {
  const parts = replies.map((r) => r[which] ?? new Float64Array(0));
  if (replies.some((r) => r.problem !== undefined) || parts.every((p) => p.length === 0)) return undefined;
  const out = new Float64Array(parts.reduce((s, r) => s + r.length, 0));
  let o = 0;
  for (const r of parts) {
    out.set(r, o);
    o += r.length;
  }
  return out;
}

/** The first failed replay of an evaluation batch, or a batch with nothing to compare, in words. */
export function replyProblem(
  batches: readonly (readonly ReplayReply[])[],
  files: readonly string[],
  phase: string,
): string | undefined {
  for (const rs of batches) {
    const i = rs.findIndex((r) => r.problem !== undefined);
    if (i >= 0) return `${basename(files[i] ?? '')}: ${rs[i].problem}`;
  }
  if (batches.length > 0 && batches.every((rs) => rs.every((r) => r.residuals.length === 0)))
    return `no episode has ${phase} samples in the fitted window`;
  return undefined;
}

export function firstProblem(rs: readonly (Float64Array | undefined)[]): string {
  return rs.every((r) => r === undefined) ? 'every replay failed' : 'some replays failed';
}

export function rmsOf(r: Float64Array): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += r[i] * r[i];
  return Math.sqrt(s / Math.max(1, r.length));
}

/** Mean over episodes of each arm joint's squared RMS, rooted (episodes weigh alike). */
export function perJointRms(replies: readonly ReplayReply[]): number[] {
  return ARM_JOINT_INDICES.map((j) =>
    Math.sqrt(replies.reduce((s, r) => s + (r.rmsRad[j] ?? NaN) ** 2, 0) / replies.length),
  );
}

export function overallRms(replies: readonly ReplayReply[]): number {
  const pj = perJointRms(replies);
  return Math.sqrt(pj.reduce((s, x) => s + x * x, 0) / pj.length);
}

export function mrad(x: number): string {
  return Number.isFinite(x) ? `${(x * 1000).toFixed(2)} mrad` : '—';
}

export function round6(x: number): number {
  return Number(x.toPrecision(6));
}
