/**
 * The operator's keys, and the foot pedal's. A USB foot pedal is an HID keyboard: program its
 * pedals (with the vendor's tool, once) to send F13, F14 and F15 — keys no desk keyboard has, so a
 * pedal never types into a field and a field never swallows a pedal. They act even while a text
 * field has focus (hands on the arms, foot on the pedal); the letter keys do not.
 *
 *   key        pedal  action
 *   Esc        F15    E-stop (always)
 *   S          F14    stop the running rollout (the rig holds, then damps)
 *   R          F13    run the form's rollout
 *   H / D             hold / damp
 *   1–5               views
 *
 * On the Session page (an eval session's steps; the left pedal is the step's big button):
 *   Enter      F13    the step's big button: placed — go / save the score / table cleared / carry on / redo it
 *   ↑ / ↓ (+ / −)     the count up / down on the score step
 *   X                 abort this rollout and redo it (asks for the reason)
 *   N                 close an unscored rollout without a redo
 *   P                 pause while placing
 *   E                 take over the running rollout with the leader arm, and give it back (a station with a leader)
 *   Q                 stop the session for now (resume it later, every score kept)
 *
 * On the Teleop page (the keys of 'tandem teleop record'):
 *   Space / → / Enter  F13   start the take now / end the take or the reset early
 *   ← / Backspace / D        discard the take and record it again (D damps when nothing records)
 *   E                        engage / release leader–follower sync
 *   Q                        stop the recording (the take in flight is kept)
 *   (F14 still stops: the follower holds, then damps.)
 */
export type SessionKey = 'go' | 'count-up' | 'count-down' | 'redo' | 'close' | 'pause' | 'stop-for-now' | 'take-over';

export type TeleopKey = 'next' | 'discard' | 'sync' | 'quit';

export type KeyAction =
  | 'estop'
  | 'stop-rollout'
  | 'run'
  | 'hold'
  | 'damp'
  | { readonly view: number }
  | { readonly session: SessionKey }
  | { readonly teleop: TeleopKey };

export const PEDAL_KEYS: Readonly<Record<string, KeyAction>> = { F13: 'run', F14: 'stop-rollout', F15: 'estop' };

const LETTER_KEYS: Readonly<Record<string, KeyAction>> = { s: 'stop-rollout', r: 'run', h: 'hold', d: 'damp' };

export interface KeyPress {
  readonly key: string;
  /** Focus is in a text field, select or text area. */
  readonly typing: boolean;
  readonly modifier: boolean;
  /** The Session page is shown: its step keys apply. */
  readonly inSession?: boolean;
  /** The Teleop page is shown: its take keys apply. */
  readonly inTeleop?: boolean;
}

// D discards, as in the terminal (its lines say so); with no recording running D damps as everywhere.
const TELEOP_KEYS: Readonly<Record<string, TeleopKey>> = {
  ' ': 'next',
  arrowright: 'next',
  enter: 'next',
  arrowleft: 'discard',
  backspace: 'discard',
  d: 'discard',
  e: 'sync',
  q: 'quit',
};

const SESSION_KEYS: Readonly<Record<string, SessionKey>> = {
  enter: 'go',
  arrowup: 'count-up',
  '+': 'count-up',
  arrowdown: 'count-down',
  '-': 'count-down',
  x: 'redo',
  n: 'close',
  p: 'pause',
  q: 'stop-for-now',
  e: 'take-over',
};

/** What a key press does, or null. */
export function actionForKey(k: KeyPress): KeyAction | null {
  if (k.key === 'Escape') return 'estop';
  if (k.inSession && k.key === 'F13') return { session: 'go' };
  if (k.inTeleop && k.key === 'F13') return { teleop: 'next' };
  const pedal = PEDAL_KEYS[k.key];
  if (pedal) return pedal;
  if (k.typing || k.modifier) return null;
  const lower = k.key.toLowerCase();
  if (k.inSession && SESSION_KEYS[lower]) return { session: SESSION_KEYS[lower] };
  if (k.inTeleop && TELEOP_KEYS[lower]) return { teleop: TELEOP_KEYS[lower] };
  if (LETTER_KEYS[lower]) return LETTER_KEYS[lower];
  if (/^[1-5]$/.test(k.key)) return { view: Number(k.key) };
  return null;
}
