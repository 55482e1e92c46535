/** What the station's Rig page shows beside the rig's state: its motors, the emulated cell's numbers, the calibrations in use. */
import type { Rig } from '../rig/contract.js';
import type { Store } from '../store/store.js';
import type { CalibrationInUse, CellStatus, MotorStatus } from '../server/api-types.js';
import { RigHost } from '../server/rig-host.js';
import { YamCanRig } from '../../drivers/yam/yam-can-rig.js';
import { describeStatus, isFaultStatus, statusName } from '../../drivers/damiao/protocol.js';
import type { RigServices } from './services/rig-services.js';
import type { StationProjector } from './station-projector.js';
import { DEFAULT_SIM_CALIBRATION, SIM_CALIBRATION_KIND, simCalibrationHash } from '../sim/calibration.js';
import { cameraCalibrationSha256, DEFAULT_CAMERA_CALIBRATION } from '../sim/render/camera-calibration.js';

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** Per-motor reports of a YamCanRig (hardware or the emulated cell); other rigs report none. */
export function motorReports(rig: Rig, nowS: number): MotorStatus[] {
  if (!(rig instanceof YamCanRig)) return [];
  const out: MotorStatus[] = [];
  for (const side of rig.arms) {
    const link = rig.link(side)!;
    link.motors.forEach((m, index) => {
      const heard = m.lastReplyS === m.lastReplyS;
      const f = m.feedback;
      out.push({
        name: m.name,
        arm: side,
        index,
        canId: m.id,
        model: m.model,
        positionRad: heard ? num(m.positionRad) : null,
        velocityRadS: heard ? num(f.velocityRadS) : null,
        torqueNm: heard ? num(f.torqueNm) : null,
        mosfetTempC: heard ? num(f.mosfetTempC) : null,
        rotorTempC: heard ? num(f.rotorTempC) : null,
        status: heard ? (isFaultStatus(f.status) ? describeStatus(f.status) : statusName(f.status)) : 'not heard yet',
        fault: heard && isFaultStatus(f.status),
        lastReplyAgeS: heard ? Math.max(0, nowS - m.lastReplyS) : null,
      });
    });
  }
  return out;
}

export function cellStatus(services: RigServices): CellStatus | null {
  const w = services.world();
  if (!w) return null;
  return {
    task: w.task,
    tier: w.tier,
    objects: w.objects,
    busyFraction: w.busyFraction,
    marginX: num(w.marginX),
    maxLagMs: w.maxLagMs,
    behindEvents: w.behindEvents,
  };
}

/** The calibrations the station runs with now, for the Rig page (the store's own list is added by the server). */
export function calibrationsInUse(
  host: RigHost<RigServices>,
  rigType: string,
  store: Store,
  projector: StationProjector,
): () => CalibrationInUse[] {
  const sim = DEFAULT_SIM_CALIBRATION;
  const simSha = simCalibrationHash(sim);
  const cameras = DEFAULT_CAMERA_CALIBRATION;
  const camerasSha = cameraCalibrationSha256(cameras);
  return () => {
    const model = host.model();
    const fitted = store.latestCalibration(SIM_CALIBRATION_KIND);
    return [
      {
        what: 'rig model',
        name: model?.name ?? 'not known until the rig is up',
        version: null,
        sha256: null,
        note: `the ${rigType} rig config's model: joint limits, gains, links`,
      },
      {
        what: 'sim twin physics',
        name: sim.name,
        version: sim.version,
        sha256: simSha,
        note:
          fitted && fitted.sha256 !== simSha
            ? `the default; the store's newest (v${fitted.version}, ${fitted.sha256.slice(0, 12)}…) runs where a sweep or report names it (--calibration)`
            : 'the default; a sweep or report may name another (--calibration)',
      },
      {
        what: 'sim cameras',
        name: cameras.name,
        version: cameras.version,
        sha256: camerasSha,
        note: 'intrinsics and mounts of cam_high and the wrist cameras',
      },
      projector.calibration
        ? {
            what: 'projector',
            name: 'projector homography',
            version: projector.calibration.version,
            sha256: projector.calibration.sha256,
            note: projector.feed.state().description,
          }
        : { what: 'projector', name: 'none', version: null, sha256: null, note: projector.feed.state().description },
    ];
  };
}
