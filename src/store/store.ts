/**
 * The station's SQLite store: layout sets, policies, sessions, rollouts, operator scores,
 * calibrations, recordings, teleop sessions, sweeps and session journals, in one file (WAL
 * journal, foreign keys on, synchronous=FULL; see connection.ts).
 *
 * Each kind of record is its own module owning its SQL; `Store` only composes them over one
 * connection, so the rest of the code keeps one object to pass around and one place to close.
 * Every write method has committed (and reached the disk) before it returns. The methods' meaning
 * is documented in the record modules.
 */
import type { LayoutSet } from '../layouts/layout-set.js';
import type { TaskEvent } from '../tasks/task-events.js';
import { Calibrations } from './calibrations.js';
import {
  openConnection,
  type OpenStoreOptions,
  type StoreConnection,
  type StoreConnectionSettings,
} from './connection.js';
import { LayoutSets } from './layout-sets.js';
import { Policies } from './policies.js';
import { Recordings } from './recordings.js';
import type * as R from './records.js';
import { Rollouts } from './rollouts.js';
import { OperatorScores } from './scores.js';
import { SessionJournals } from './session-journal.js';
import { Sessions } from './sessions.js';
import { Sweeps } from './sweeps.js';
import { TeleopSessions } from './teleop.js';

export type * from './records.js';
export { StoreError, type OpenStoreOptions, type StoreConnectionSettings } from './connection.js';

/** Opens (creating and migrating when needed) the store at `file`. */
export function openStore(file: string, options: OpenStoreOptions = {}): Store {
  return new Store(openConnection(file, options));
}

export class Store {
  private readonly layoutSets: LayoutSets;
  private readonly policies: Policies;
  private readonly sessions: Sessions;
  private readonly calibrations: Calibrations;
  private readonly recordings: Recordings;
  private readonly teleop: TeleopSessions;
  private readonly rollouts: Rollouts;
  private readonly sweeps: Sweeps;
  private readonly scores: OperatorScores;
  private readonly journals: SessionJournals;

  /** Use openStore(file). */
  constructor(private readonly c: StoreConnection) {
    this.layoutSets = new LayoutSets(c);
    this.policies = new Policies(c);
    this.sessions = new Sessions(c);
    this.calibrations = new Calibrations(c);
    this.recordings = new Recordings(c);
    this.teleop = new TeleopSessions(c, this.sessions);
    this.rollouts = new Rollouts(c, {
      policies: this.policies,
      layoutSets: this.layoutSets,
      sessions: this.sessions,
      calibrations: this.calibrations,
    });
    this.sweeps = new Sweeps(c, this.sessions, this.rollouts);
    this.scores = new OperatorScores(c, (id) => this.rollouts.getRollout(id) !== undefined);
    this.journals = new SessionJournals(c, this.scores);
  }

  /** The database file, for messages. */
  get file(): string {
    return this.c.file;
  }

  close(): void {
    this.c.close();
  }

  get isOpen(): boolean {
    return this.c.isOpen;
  }

  get schemaVersion(): number {
    return this.c.schemaVersion;
  }

  get journalMode(): string {
    return this.c.journalMode;
  }

  connectionSettings(): StoreConnectionSettings {
    return this.c.settings();
  }

  // ---- layout sets (layout-sets.ts) ----
  putLayoutSet(set: R.LayoutSetInput | LayoutSet): { record: R.LayoutSetRecord; inserted: boolean } {
    return this.layoutSets.putLayoutSet(set);
  }
  loadLayoutSet(sha256: string): LayoutSet | undefined {
    return this.layoutSets.loadLayoutSet(sha256);
  }
  getLayoutSet(sha256: string): R.LayoutSetRecord | undefined {
    return this.layoutSets.getLayoutSet(sha256);
  }
  listLayoutSets(filter: { task?: string } = {}): R.LayoutSetRecord[] {
    return this.layoutSets.listLayoutSets(filter);
  }

  // ---- policies (policies.ts) ----
  upsertPolicy(input: R.PolicyInput): R.PolicyRecord {
    return this.policies.upsertPolicy(input);
  }
  getPolicy(id: number): R.PolicyRecord | undefined {
    return this.policies.getPolicy(id);
  }
  listPolicies(): R.PolicyRecord[] {
    return this.policies.listPolicies();
  }

  // ---- sessions (sessions.ts) ----
  createSession(input: R.SessionInput): R.SessionRecord {
    return this.sessions.createSession(input);
  }
  endSession(id: number, opts: { endedAt?: string; notes?: string | null } = {}): R.SessionRecord {
    return this.sessions.endSession(id, opts);
  }
  getSession(id: number): R.SessionRecord | undefined {
    return this.sessions.getSession(id);
  }
  listSessions(filter: { kind?: R.SessionKind } = {}): R.SessionRecord[] {
    return this.sessions.listSessions(filter);
  }

  // ---- calibrations (calibrations.ts) ----
  putCalibration(input: R.CalibrationInput): { record: R.CalibrationRecord; inserted: boolean } {
    return this.calibrations.putCalibration(input);
  }
  getCalibration(sha256: string): R.CalibrationRecord | undefined {
    return this.calibrations.getCalibration(sha256);
  }
  calibrationKinds(): { kind: string; count: number; newest: Omit<R.CalibrationRecord, 'canonicalJson'> }[] {
    return this.calibrations.calibrationKinds();
  }
  latestCalibration(kind: string): R.CalibrationRecord | undefined {
    return this.calibrations.latestCalibration(kind);
  }

  // ---- recordings (recordings.ts) ----
  startRecording(input: { file: string; kind: R.RecordingKind; startedAt?: string }): number {
    return this.recordings.startRecording(input);
  }
  endRecording(id: number, end: R.RecordingEnd): void {
    this.recordings.endRecording(id, end);
  }
  linkRecording(id: number, rolloutId: number): void {
    this.recordings.linkRecording(id, rolloutId);
  }
  getRecording(id: number): R.RecordingRecord | undefined {
    return this.recordings.getRecording(id);
  }
  findRecordingByFile(file: string): R.RecordingRecord | undefined {
    return this.recordings.findRecordingByFile(file);
  }
  listRecordings(filter: { states?: readonly R.RecordingState[] } = {}): R.RecordingRecord[] {
    return this.recordings.listRecordings(filter);
  }

  // ---- teleop sessions (teleop.ts) ----
  createTeleopSession(input: R.TeleopSessionInput): R.TeleopSessionRecord {
    return this.teleop.createTeleopSession(input);
  }
  getTeleopSession(sessionId: number): R.TeleopSessionRecord | undefined {
    return this.teleop.getTeleopSession(sessionId);
  }
  latestStoppedTeleopSession(outDir: string): R.TeleopSessionRecord | undefined {
    return this.teleop.latestStoppedTeleopSession(outDir);
  }
  setTeleopSessionState(sessionId: number, state: R.TeleopSessionState, problem: string | null = null): void {
    this.teleop.setTeleopSessionState(sessionId, state, problem);
  }
  startTeleopTake(input: { sessionId: number; episodeIndex: number; recordingId: number; file: string }): number {
    return this.teleop.startTeleopTake(input);
  }
  endTeleopTake(
    id: number,
    end: { state: 'kept' | 'discarded'; marks?: readonly string[]; discardReason?: string; file?: string },
  ): void {
    this.teleop.endTeleopTake(id, end);
  }
  listTeleopTakes(sessionId: number): R.TeleopTakeRecord[] {
    return this.teleop.listTeleopTakes(sessionId);
  }

  // ---- rollouts (rollouts.ts) ----
  insertRollout(input: R.RolloutInput): number {
    return this.rollouts.insertRollout(input);
  }
  insertRollouts(inputs: readonly R.RolloutInput[]): number[] {
    return this.rollouts.insertRollouts(inputs);
  }
  getRollout(id: number): R.RolloutRecord | undefined {
    return this.rollouts.getRollout(id);
  }
  listRollouts(filter: R.RolloutFilter = {}): R.RolloutRecord[] {
    return this.rollouts.listRollouts(filter);
  }
  listTaskEvents(rolloutId: number): TaskEvent[] {
    return this.rollouts.listTaskEvents(rolloutId);
  }

  /** The stretches the operator drove with the leader in a rollout (empty: nobody took over). */
  listTakeovers(rolloutId: number): R.TakeoverRecord[] {
    return this.rollouts.listTakeovers(rolloutId);
  }
  layoutOutcomes(filter: R.RolloutFilter = {}): R.LayoutOutcomeRow[] {
    return this.rollouts.layoutOutcomes(filter);
  }
  outcomeCounts(filter: R.RolloutFilter = {}): R.OutcomeCountRow[] {
    return this.rollouts.outcomeCounts(filter);
  }

  // ---- sweeps (sweeps.ts) ----
  createSweep(input: R.SweepInput): R.SweepRecord {
    return this.sweeps.createSweep(input);
  }
  getSweep(id: string): R.SweepRecord | undefined {
    return this.sweeps.getSweep(id);
  }
  findUnfinishedSweep(requestSha256: string, queue: string | null): R.SweepRecord | undefined {
    return this.sweeps.findUnfinishedSweep(requestSha256, queue);
  }
  insertSweepRollout(input: R.RolloutInput & { readonly sweepId: string }): { id: number; inserted: boolean } {
    return this.sweeps.insertSweepRollout(input);
  }
  sweepRolloutKeys(sweepId: string): Set<string> {
    return this.sweeps.sweepRolloutKeys(sweepId);
  }

  // ---- operator scores (scores.ts) ----
  insertOperatorScore(input: R.OperatorScoreInput): number {
    return this.scores.insertOperatorScore(input);
  }
  listOperatorScores(rolloutId: number): R.OperatorScoreRecord[] {
    return this.scores.listOperatorScores(rolloutId);
  }

  // ---- session plans and journals (session-journal.ts) ----
  putSessionPlan(input: { sessionId: number; planSha256: string; layoutSetSha256: string; planJson: string }): void {
    this.journals.putSessionPlan(input);
  }
  getSessionPlan(sessionId: number): R.SessionPlanRecord | undefined {
    return this.journals.getSessionPlan(sessionId);
  }
  appendSessionJournal(entry: R.SessionJournalInput, score?: R.OperatorScoreInput): R.SessionJournalRecord {
    return this.journals.appendSessionJournal(entry, score);
  }
  listSessionJournal(sessionId: number): R.SessionJournalRecord[] {
    return this.journals.listSessionJournal(sessionId);
  }
}
