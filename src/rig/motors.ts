import type { MotorModelId } from './contract.js';

/**
 * Damiao MIT-mode value ranges per motor model (symmetric ±). Vendor copies disagree in
 * places (older DM4340 V_MAX 8), so drivers read registers 21–23 at start-up and compare.
 */
export interface MotorRanges {
  readonly pMaxRad: number;
  readonly vMaxRadS: number;
  readonly tMaxNm: number;
}

export const MOTOR_RANGES: Readonly<Record<MotorModelId, MotorRanges>> = {
  DM4310: { pMaxRad: 12.5, vMaxRadS: 30, tMaxNm: 10 },
  DM4340: { pMaxRad: 12.5, vMaxRadS: 10, tMaxNm: 28 },
  DM3507: { pMaxRad: 12.5, vMaxRadS: 50, tMaxNm: 5 },
  DM6248: { pMaxRad: 12.5, vMaxRadS: 20, tMaxNm: 120 },
  DM8009: { pMaxRad: 12.5, vMaxRadS: 45, tMaxNm: 54 },
};

/** MIT gain ranges, the same for every model. */
export const KP_MAX = 500;
export const KD_MAX = 5;
