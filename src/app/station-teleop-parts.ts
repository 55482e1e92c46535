/** The Teleop page on the station: what it offers, and its recorder (`tandem teleop record`'s own flow). */
import { isTaskId } from '../tasks/registry.js';
import type { Store } from '../store/store.js';
import { TELEOP_LEADERS, type TeleopChoices } from '../server/api-types.js';
import { RigHost } from '../server/rig-host.js';
import { ApiRefusal } from '../server/request-checks.js';
import { UserError } from './command.js';
import { rigKindOf } from './station-rig.js';
import type { RigServices } from './services/rig-services.js';
import { leaderSpecOf, type StationConfig } from './station-config.js';
import type { TeleopParts } from '../server/teleop-host.js';
import { recordTeleop } from './teleop-recording.js';
import { teleopCamerasOf } from './teleop-cameras.js';
import { join } from 'node:path';

/**
 * What the Teleop page offers: the station config's leader when it names one, the script-moved
 * emulated leaders only on an emulated rig (nobody would hold them on real arms), and the config's
 * cameras when it names any (every take records those).
 */
export function teleopChoices(station: StationConfig | undefined, rigType: string): TeleopChoices {
  const leaders: { value: TeleopChoices['leaders'][number]['value']; words: string }[] = [];
  const l = station?.leader;
  if (l) {
    const kind =
      l.kind === 'yam'
        ? 'YAM leader + teaching handle'
        : l.kind === 'gello'
          ? 'GELLO'
          : `${l.kind} (moves by a script)`;
    const ports = l.kind.startsWith('emulated-')
      ? ''
      : ` on ${l.ports.join(', ')}${l.kind === 'yam' ? ` (${l.transport === 'damiao' ? 'Damiao USB-CAN' : 'SLCAN'})` : ''}`;
    leaders.push({ value: 'station', words: `the station's ${kind}${ports}` });
  }
  const kind = rigKindOf({ type: rigType });
  if (!kind.realArms)
    leaders.push(
      { value: 'emulated-yam', words: 'emulated YAM leader + teaching handle' },
      { value: 'emulated-gello', words: 'emulated GELLO' },
    );
  const cameras = station && station.cameras.length > 0 ? station.cameras.map((c) => c.name).join(', ') : null;
  return { leaders, cameras, ownTable: kind.ownWorld };
}

/**
 * The Teleop view's recorder: `tandem teleop record`'s own flow (recordTeleop) with the station's
 * rig as the follower, takes in <data dir>/teleop, the UI's buttons in its controls queue; a
 * stored layout on the cell's table, and `--resume` of the newest stopped session there.
 */
export function teleopParts(
  store: Store,
  host: RigHost<RigServices>,
  follower: string,
  dataDir: string,
  station: StationConfig | undefined,
): TeleopParts {
  const outDir = join(dataDir, 'teleop');
  // The station config's own leader, as the session row names it (its ports).
  const stationLeader = station?.leader ? leaderSpecOf(station.leader) : undefined;
  // How recordTeleop names this follower in the session row (a resumed session must be on the same one).
  const recordedFollower = follower === 'cell' ? 'cell seed:0' : follower;
  const layoutOf = (sha: string, index: number) => {
    const set = store.loadLayoutSet(sha);
    if (!set)
      throw new ApiRefusal(
        400,
        `There is no layout set ${sha.slice(0, 12)}… in the store; sample or upload one on the Rollouts page.`,
      );
    if (!Number.isInteger(index) || index < 0 || index >= set.layouts.length)
      throw new ApiRefusal(
        400,
        `Layout set ${sha.slice(0, 12)}… has layouts 0 to ${set.layouts.length - 1}; there is no layout ${index}.`,
      );
    return { set, index };
  };
  return {
    resumable() {
      const s = store.latestStoppedTeleopSession(outDir);
      if (!s) return null;
      const kept = store.listTeleopTakes(s.sessionId).filter((t) => t.state === 'kept').length;
      const cli = `carry it on with: tandem teleop record --resume --out ${outDir}`;
      let blocked: string | null = null;
      if (!(TELEOP_LEADERS as readonly string[]).includes(s.leader) && s.leader !== stationLeader)
        blocked = `Teleop session ${s.sessionId} was led by '${s.leader}', which is not this station's leader${stationLeader ? ` (${stationLeader})` : ''}; ${cli} --leader ${s.leader}.`;
      else if (!/^(none|cell|testsrc:[1-8])$/.test(s.cameras))
        blocked = `Teleop session ${s.sessionId} records cameras '${s.cameras}', which the station page does not open; ${cli} --cameras ${s.cameras}.`;
      else if (s.follower !== recordedFollower)
        blocked = `Teleop session ${s.sessionId} was recorded on follower '${s.follower}', not on this station's rig ('${recordedFollower}'); ${cli} --follower ….`;
      else if (s.layoutSetSha256 !== null && !store.loadLayoutSet(s.layoutSetSha256))
        blocked = `Teleop session ${s.sessionId} had layout set ${s.layoutSetSha256.slice(0, 12)}… on the table, which is not in the store; upload it on the Rollouts page first.`;
      return {
        sessionId: s.sessionId,
        task: s.task,
        prompt: s.prompt,
        kept,
        episodes: s.episodes,
        seconds: s.episodeSeconds,
        resetSeconds: s.resetSeconds,
        leader: s.leader,
        cameras: s.cameras,
        layoutSet: s.layoutSetSha256,
        layout: s.layoutIndex,
        startedAt: s.startedAt,
        blocked,
      };
    },
    async record(req, hooks, resume) {
      const layout =
        req.layoutSet !== undefined && req.layout !== undefined ? layoutOf(req.layoutSet, req.layout) : undefined;
      if (layout && isTaskId(req.task) && req.task !== layout.set.task)
        throw new ApiRefusal(
          400,
          `Layout set ${layout.set.sha256.slice(0, 12)}… is drawn for ${layout.set.task}, not ${req.task}; pick a ${req.task} set, or that task.`,
        );
      if (resume && store.latestStoppedTeleopSession(outDir)?.sessionId !== resume.sessionId)
        throw new ApiRefusal(
          409,
          `Teleop session ${resume.sessionId} is no longer the one to resume; reload the page.`,
        );
      if (req.leader === 'station' && stationLeader === undefined)
        throw new ApiRefusal(
          400,
          "This station's config names no leader; add 'leader' to the station config (docs/station-config.md) and restart the station.",
        );
      try {
        const r = await recordTeleop({
          store,
          outDir,
          leader: req.leader === 'station' ? stationLeader! : req.leader,
          follower,
          // A station config names the follower's rig and the cameras every take records.
          ...(station ? { station } : {}),
          cameras: teleopCamerasOf(station, req.cameras),
          cameraFps: 5,
          task: req.task,
          episodes: req.episodes,
          seconds: req.seconds,
          ...(req.resetSeconds !== undefined ? { resetSeconds: req.resetSeconds } : {}),
          ...(layout ? { layout } : {}),
          ...(resume ? { resume: true } : {}),
          log: hooks.log,
          signal: hooks.signal,
          onReady: ({ controls, sessionId }) => {
            controls.attend('the station UI');
            hooks.ready(sessionId, (action) => controls.push(action, 'the station UI'));
          },
          onPhase: hooks.phase,
          onTake: hooks.take,
          withRig: (table, use) => host.forRollout(table, use),
          realLeaderAdvice: stationLeader
            ? `pick the station's own leader (${stationLeader}) on this page.`
            : "name the real leader in the station config ('leader', docs/station-config.md), restart the station with --station-config FILE and pick it on this page.",
        });
        return {
          sessionId: r.sessionId,
          end: r.session.end,
          ...(r.session.problem ? { problem: r.session.problem } : {}),
        };
      } catch (e) {
        if (e instanceof UserError) throw new ApiRefusal(400, e.message);
        throw e;
      }
    },
  };
}
