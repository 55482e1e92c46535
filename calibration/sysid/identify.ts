/**
 * Which fitted parameters the episodes pin down: sensitivity at the optimum, and the rules that
 * call a parameter identified, minor, or loose (kept at its start value).
 */
import type { SimCalibration } from '../../src/sim/calibration.js';
import { coordinateSigmas } from './levenberg-marquardt.js';
import { autocorrelationInflation, fullJacobian, jackknifeSigmas, sumSquares, undoneBy } from './fit-uncertainty.js';
import { fromUnit, unitSlope, type FitParameter } from './parameters.js';
import { ARM_JOINT_INDICES } from './replay.js';

/**
 * When a parameter counts as identified by the episodes: one standard deviation below a quarter
 * of its value (parameters on a log scale: damping, friction, armature), or below a tenth of its
 * range (ratios and delays). Looser, and a fit on a noisy take "identifies" numbers it merely
 * traded against each other.
 */
export const IDENTIFIED_RELATIVE_SIGMA = 0.25;
export const IDENTIFIED_SIGMA_U = 0.1;
/**
 * …and when it carries part of the gap: putting it back to its start value (the others kept)
 * would undo at least this share of what the fit gained. A small term the data barely care about
 * soaks up whatever the twin does not model (on the emulated cell: the motors' quantised MIT
 * frames) and lands several σ from the truth however small its σ; it is not reported as found.
 */
export const IDENTIFIED_SHARE_OF_GAIN = 0.02;

export interface ParameterReport {
  readonly name: string;
  readonly unit: string;
  readonly start: number;
  readonly fitted: number;
  /** One standard deviation, in the parameter's unit (Infinity: the episodes do not move it at all). */
  readonly sigma: number;
  /** Pinned down by the episodes and carrying part of the gap: a physical estimate. */
  readonly identified: boolean;
  /** Pinned down but carrying under IDENTIFIED_SHARE_OF_GAIN of the gain: kept as fitted, not an estimate to trust (it may soak up what the twin does not model). */
  readonly minor: boolean;
  /** Why it was not fitted at all, when the episodes showed it before the fit (one clause). */
  readonly note?: string;
}

/**
 * Sensitivity at the optimum: a full Jacobian (every parameter alone, so correlations between
 * joints count), with the residuals' autocorrelation taken into account (neighbouring samples are
 * not independent) and the data's own verdict on top of the model's — how far each parameter
 * would move if one episode were left out (a one-step delete-one jackknife): where the model
 * cannot quite match the robot, a parameter that soaks up that mismatch moves episode by episode,
 * however small its σ claims it is. Loose parameters go back to their start value (u0).
 */
export async function identify(
  params: readonly FitParameter[],
  from: SimCalibration,
  residualsAt: (p: readonly Float64Array[]) => Promise<(Float64Array | undefined)[]>,
  u0: Float64Array,
  lm: { readonly u: Float64Array; readonly residuals: Float64Array },
  startResiduals: Float64Array,
  episodeLengths: readonly number[],
  width = ARM_JOINT_INDICES.length,
): Promise<{ reports: ParameterReport[]; u: Float64Array }> {
  const fullJ = await fullJacobian(residualsAt, lm.u, lm.residuals);
  const inflation = autocorrelationInflation(lm.residuals, episodeLengths, width);
  const sigmaAr = coordinateSigmas(fullJ, lm.residuals, params.length).map((x) => x * Math.sqrt(inflation));
  const sigmaJack = jackknifeSigmas(fullJ, lm.residuals, params.length, episodeLengths);
  const sigmaU = sigmaAr.map((x, k) => Math.max(x, sigmaJack?.[k] ?? 0));
  const u = Float64Array.from(lm.u);
  const gain = Math.max(0, sumSquares(startResiduals) - sumSquares(lm.residuals));
  const reports = params.map((p, k) => {
    const value = fromUnit(p, lm.u[k]);
    const sigma = sigmaU[k] * unitSlope(p, lm.u[k]);
    const precise = p.log ? sigma < IDENTIFIED_RELATIVE_SIGMA * value : sigmaU[k] < IDENTIFIED_SIGMA_U;
    const important =
      undoneBy(fullJ, lm.residuals, params.length, k, u0[k] - lm.u[k]) >= IDENTIFIED_SHARE_OF_GAIN * gain;
    // Loose: the episodes do not pin it down, so it keeps the start value. Precise but minor:
    // kept as fitted (the record tracks better with it), reported as no physical estimate.
    if (!precise) u[k] = u0[k];
    return {
      name: p.name,
      unit: p.unit,
      start: p.get(from),
      fitted: precise ? value : p.get(from),
      sigma,
      identified: precise && important,
      minor: precise && !important,
    };
  });
  return { reports, u };
}
