// The analysis room's public surface: statistics for evaluation reports. Pure; no Node built-ins.
export { wilsonInterval, clopperPearsonInterval, type ProportionInterval, type IntervalOptions } from './intervals.js';
export {
  bootstrapMean,
  bootstrapMeanOverLayouts,
  bootstrapLayoutMeans,
  quantileSorted,
  type BootstrapInterval,
  type BootstrapOptions,
} from './bootstrap.js';
export { pearson, mmrv, type PolicyPair, type PearsonResult } from './correlation.js';
export {
  summarizeByTier,
  summarizeLayoutsByTier,
  type LayoutOutcome,
  type TierRollout,
  type TierSummary,
  type TierSummaryOptions,
} from './tier-summary.js';
export { betaQuantile, regularizedIncompleteBeta, logGamma, normalQuantile } from './special-functions.js';
export { pairSimReal, type PolicyLayoutResult, type PairedPolicy, type Pairing } from './pairing.js';
export {
  sequentialVerdict,
  bettingConfidenceSequencePath,
  type PairedResult,
  type SequentialVerdict,
  type SequentialOptions,
} from './sequential.js';
export { controlVariateMean, type ControlVariateEstimate, type PairedLayout } from './control-variate.js';
export { costLedger, DEFAULT_COST_CONFIG, type CostConfig, type PolicyCost } from './cost.js';
export {
  buildPairedReport,
  ReportInputError,
  type PairedReport,
  type ReportInput,
  type ReportRollout,
  type ReportPolicy,
} from './paired-report.js';
export { renderReportHtml, type ReportMeta } from './report-html.js';
export { reportFigures, type Figure } from './report-figures.js';
