/**
 * Bring-up probe: which Damiao motors answer on a bus, with their range registers (and the model
 * those match), watchdog, firmware and status. Disables each motor it finds (the safe state) to get
 * its feedback; never enables anything.
 */
import type { MotorModelId } from '../../src/rig/contract.js';
import { MOTOR_RANGES, type MotorRanges } from '../../src/rig/motors.js';
import type { CanBus } from '../can/bus.js';
import type { CanFrame } from '../can/frame.js';
import {
  FEEDBACK_ID_OFFSET,
  REG_READ,
  RID,
  TIMEOUT_TICK_MS,
  describeStatus,
  isFaultStatus,
  parseRegisterReply,
  registerReadFrame,
  specialFrame,
  unpackFeedback,
} from '../damiao/protocol.js';

export interface ProbedMotor {
  readonly id: number;
  readonly pMaxRad: number;
  readonly vMaxRadS: number;
  readonly tMaxNm: number;
  /** Catalogue models whose ranges match the registers. */
  readonly matchingModels: MotorModelId[];
  readonly watchdogMs: number;
  readonly firmware: number;
  readonly status: number;
  readonly statusText: string;
  readonly fault: boolean;
  readonly positionRad: number;
  readonly mosfetTempC: number;
  readonly rotorTempC: number;
}

export interface ProbeResult {
  readonly motors: ProbedMotor[];
  /** IDs that were asked and did not answer. */
  readonly silent: number[];
}

export async function probeMotors(bus: CanBus, ids: readonly number[], timeoutMs = 150): Promise<ProbeResult> {
  const registers = new Map<number, Map<number, number>>();
  const feedback = new Map<number, Uint8Array>();
  const off = bus.onFrame((f: CanFrame) => {
    const id = f.id - FEEDBACK_ID_OFFSET;
    if (!ids.includes(id) || f.data.length !== 8) return;
    if (f.data[0] === id && f.data[1] === 0 && f.data[2] === REG_READ) {
      const r = parseRegisterReply(f.data);
      if (r) {
        if (!registers.has(id)) registers.set(id, new Map());
        registers.get(id)!.set(r.rid, r.value);
        return;
      }
    }
    feedback.set(id, Uint8Array.from(f.data));
  });
  try {
    const rids = [RID.PMAX, RID.VMAX, RID.TMAX, RID.TIMEOUT, RID.SOFTWARE_VERSION];
    // Rounds until every motor that answers at all has answered everything, or the attempts run out:
    // waits on replies, not on fixed sleeps, so a slow host costs time, not results.
    for (let attempt = 0; attempt < 3; attempt++) {
      const missing = (id: number) => rids.filter((rid) => !registers.get(id)?.has(rid));
      const askIds = ids.filter((id) => missing(id).length > 0);
      if (askIds.length === 0) break;
      for (const rid of rids)
        bus.send(askIds.filter((id) => missing(id).includes(rid)).map((id) => registerReadFrame(id, rid)));
      await waitUntil(() => askIds.every((id) => missing(id).length === 0), timeoutMs * (attempt + 1));
    }
    const answering = ids.filter((id) => registers.has(id));
    for (let attempt = 0; attempt < 3; attempt++) {
      const need = answering.filter((id) => !feedback.has(id));
      if (need.length === 0) break;
      bus.send(need.map((id) => specialFrame(id, 'disable')));
      await waitUntil(() => need.every((id) => feedback.has(id)), timeoutMs * (attempt + 1));
    }
    const motors: ProbedMotor[] = [];
    for (const id of answering) {
      const reg = registers.get(id)!;
      const ranges: MotorRanges = {
        pMaxRad: reg.get(RID.PMAX) ?? NaN,
        vMaxRadS: reg.get(RID.VMAX) ?? NaN,
        tMaxNm: reg.get(RID.TMAX) ?? NaN,
      };
      const matching = (Object.keys(MOTOR_RANGES) as MotorModelId[]).filter((m) => {
        const c = MOTOR_RANGES[m];
        return close(c.pMaxRad, ranges.pMaxRad) && close(c.vMaxRadS, ranges.vMaxRadS) && close(c.tMaxNm, ranges.tMaxNm);
      });
      const fb = feedback.get(id);
      const decoded =
        fb && Number.isFinite(ranges.pMaxRad + ranges.vMaxRadS + ranges.tMaxNm)
          ? unpackFeedback(fb, ranges)
          : undefined;
      motors.push({
        id,
        ...ranges,
        matchingModels: matching,
        watchdogMs: (reg.get(RID.TIMEOUT) ?? NaN) * TIMEOUT_TICK_MS,
        firmware: reg.get(RID.SOFTWARE_VERSION) ?? NaN,
        status: decoded?.status ?? NaN,
        statusText: decoded ? describeStatus(decoded.status) : 'no feedback to the disable command',
        fault: decoded ? isFaultStatus(decoded.status) : true,
        positionRad: decoded?.positionRad ?? NaN,
        mosfetTempC: decoded?.mosfetTempC ?? NaN,
        rotorTempC: decoded?.rotorTempC ?? NaN,
      });
    }
    return { motors, silent: ids.filter((id) => !registers.has(id)) };
  } finally {
    off();
  }
}

function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-3 * Math.max(1, Math.abs(a));
}

function waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const start = Date.now();
    const t = setInterval(() => {
      if (done() || Date.now() - start >= timeoutMs) {
        clearInterval(t);
        resolve();
      }
    }, 2);
  });
}
