// The analysis room's public surface: statistics for evaluation reports. Pure; no Node built-ins.
export { wilsonInterval, clopperPearsonInterval, type ProportionInterval, type IntervalOptions } from './intervals.js';
export { bootstrapMean, bootstrapMeanOverLayouts, bootstrapLayoutMeans, quantileSorted, type BootstrapInterval, type BootstrapOptions } from './bootstrap.js';
export { pearson, mmrv, type PolicyPair, type PearsonResult } from './correlation.js';
export { summarizeByTier, summarizeLayoutsByTier, type LayoutOutcome, type TierRollout, type TierSummary, type TierSummaryOptions } from './tier-summary.js';
export { betaQuantile, regularizedIncompleteBeta, logGamma, normalQuantile } from './special-functions.js';
export { pairSimReal, type PolicyLayoutResult, type PairedPolicy, type Pairing } from './pairing.js';
