/**
 * The YAM teaching handle: a passive encoder on the leader arm's CAN bus. Request on 0x50E with
 * data [0xFF, 0x02]; reply on 0x50F: big-endian u8 device, i16 position, i16 velocity, u8 inputs
 * (bit 0 button 0, bit 1 button 1), 4096 counts per revolution. The trigger angle maps to the
 * follower's gripper: clipped to ±0.7 rad and normalised (negative readings are a trigger at rest),
 * gripper = 1 − trigger, so a released trigger is an open gripper (YAM convention, 1 = open).
 */
import type { CanFrame } from '../can/frame.js';

export const HANDLE_REQUEST_ID = 0x50e;
export const HANDLE_REPLY_ID = 0x50f;
export const HANDLE_REQUEST_DATA: readonly number[] = [0xff, 0x02];
export const HANDLE_COUNTS_PER_REV = 4096;
export const TRIGGER_TRAVEL_RAD = 0.7;
/** The handle's mass, kg: it replaces the gripper in the leader's gravity model. */
export const HANDLE_MASS_KG = 0.258;

export interface HandleReading {
  device: number;
  positionRad: number;
  velocityRadS: number;
  buttons: number;
}

export function handleRequestFrame(): CanFrame {
  return { id: HANDLE_REQUEST_ID, extended: false, data: Uint8Array.from(HANDLE_REQUEST_DATA) };
}

export function isHandleRequest(f: CanFrame): boolean {
  return !f.extended && f.id === HANDLE_REQUEST_ID && f.data.length === 2 && f.data[0] === 0xff && f.data[1] === 0x02;
}

function countsOf(rad: number): number {
  const c = Math.round((rad / (2 * Math.PI)) * HANDLE_COUNTS_PER_REV);
  return Math.max(-32768, Math.min(32767, c));
}

/** The handle's reply (used by the emulator). */
export function packHandleReply(r: HandleReading): CanFrame {
  const data = new Uint8Array(6);
  const view = new DataView(data.buffer);
  view.setUint8(0, r.device & 0xff);
  view.setInt16(1, countsOf(r.positionRad), false);
  view.setInt16(3, countsOf(r.velocityRadS), false);
  view.setUint8(5, r.buttons & 0x03);
  return { id: HANDLE_REPLY_ID, extended: false, data };
}

/** Decodes a reply into `out`; false when the frame is not a well-formed handle reply. */
export function unpackHandleReplyInto(f: CanFrame, out: HandleReading): boolean {
  if (f.extended || f.id !== HANDLE_REPLY_ID || f.data.length !== 6) return false;
  const view = new DataView(f.data.buffer, f.data.byteOffset, 6);
  out.device = view.getUint8(0);
  out.positionRad = (view.getInt16(1, false) / HANDLE_COUNTS_PER_REV) * 2 * Math.PI;
  out.velocityRadS = (view.getInt16(3, false) / HANDLE_COUNTS_PER_REV) * 2 * Math.PI;
  out.buttons = view.getUint8(5) & 0x03;
  return true;
}

/** Trigger angle → follower gripper opening (0 closed … 1 open). */
export function gripperFromTrigger(triggerRad: number): number {
  const clipped = Math.min(Math.max(triggerRad, -TRIGGER_TRAVEL_RAD), TRIGGER_TRAVEL_RAD);
  const pulled = Math.max(0, clipped) / TRIGGER_TRAVEL_RAD;
  return 1 - pulled;
}

/** Gripper opening → the trigger angle that gives it (the emulator's operator pulls it). */
export function triggerFromGripper(gripper: number): number {
  return (1 - Math.min(Math.max(gripper, 0), 1)) * TRIGGER_TRAVEL_RAD;
}
