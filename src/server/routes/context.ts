/** What the station's routes reach: the store, the rig and the hosts the server was given, and the server's own state. */
import type { DriftThresholds } from '../../analysis/sim-drift.js';
import type { Store } from '../../store/store.js';
import type { CalibrationInUse, StationInfo } from '../api-types.js';
import type { BlindViews } from '../blind-views.js';
import type { ProjectorFeed } from '../projector-feed.js';
import type { ReportThread } from '../report-thread.js';
import type { RigHost } from '../rig-host.js';
import type { SessionHost } from '../session-host.js';
import type { SingleRollouts } from '../single-rollouts.js';
import type { ViewContext } from '../store-views.js';
import type { TeleopHost } from '../teleop-host.js';

export interface StationContext {
  readonly store: Store;
  readonly views: ViewContext;
  readonly rig: RigHost<unknown>;
  readonly sessions?: SessionHost;
  readonly teleop?: TeleopHost;
  readonly projector?: ProjectorFeed;
  readonly singleRollouts: SingleRollouts;
  readonly blind: BlindViews;
  /** The compare view's paired reports and the sim-drift view are built off the main thread. */
  readonly reports: ReportThread;
  /** Where uploads are kept. */
  readonly dataDir: string;
  readonly calibrationsInUse?: () => readonly CalibrationInUse[];
  readonly simDrift?: Partial<DriftThresholds>;
  info(): StationInfo;
  /** One user of the rig at a time: refuses (409) while a single rollout, an eval session or a teleop recording has it. */
  refuseIfRigBusy(what: string): void;
}
