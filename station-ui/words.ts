/** The rig's states in an operator's words. */
import type { RigMode } from '../src/rig/contract.js';
import { rigTypeWords, type RigStatus } from '../src/server/api-types.js';

export const MODE_WORDS: Record<RigMode, string> = {
  unconfigured: 'NOT CONNECTED',
  configured: 'READY · OFF',
  active: 'ACTIVE',
  holding: 'HOLDING',
  damped: 'DAMPED · OFF',
  estopped: 'E-STOPPED',
  fault: 'FAULT',
};

/**
 * The rig's mode as the status bar shows it. While a rollout sets the rig up (the cell re-created
 * for its table, then configured, before the loop activates it) the rig's own mode reads "not
 * connected" or "off" for a moment — true of the rig, wrong for the operator: the arms are about
 * to move. That is said as SETTING UP.
 */
export function modeWords(rig: Pick<RigStatus, 'mode' | 'use'>): {
  readonly mode: RigMode | 'setting-up';
  readonly words: string;
} {
  if ((rig.use === 'changing' || rig.use === 'rollout') && (rig.mode === 'unconfigured' || rig.mode === 'configured'))
    return { mode: 'setting-up', words: 'SETTING UP' };
  return { mode: rig.mode, words: MODE_WORDS[rig.mode] };
}

/** The rig in an operator's words: "emulated cell (no hardware)", not the config's "yam-cell". */
export const rigWords = rigTypeWords;

/** What the rig is doing, in one line under the mode. */
export function useWords(rig: RigStatus): string {
  if (rig.use === 'rollout' && (rig.mode === 'unconfigured' || rig.mode === 'configured'))
    return 'setting the rig up for a rollout: the arms will move';
  if (rig.use === 'rollout') return 'a rollout, session or teleop recording has the rig';
  if (rig.use === 'changing') return 'setting the rig up…';
  if (rig.use === 'holding')
    return rig.mode === 'estopped' ? 'stopped by E-stop, motors damped' : 'holding its pose (press D to damp)';
  return rig.mode === 'configured' || rig.mode === 'damped' ? 'motors off (press H to hold)' : '';
}

const MOTOR_NAME = /\b(left|right) (arm joint \d|gripper)\b/;
const THE_MOTOR = /\bThe (left|right) (arm joint \d|gripper) motor\b/;
/** "(CAN ID 0x003) ": differs per motor, so it does not split a group. */
const CAN_ID = /\(CAN ID 0x[0-9a-f]+\) /i;

/**
 * Faults as an operator reads them: one line per distinct problem. Fourteen motors that all lost
 * communication are one line naming the fourteen, not fourteen paragraphs.
 */
export function groupedFaults(messages: readonly string[]): string[] {
  const groups = new Map<string, { names: string[]; first: string }>();
  for (const m of messages) {
    const name = MOTOR_NAME.exec(m)?.[0];
    const key = name ? m.replace(MOTOR_NAME, '·').replace(CAN_ID, '') : m;
    const g = groups.get(key);
    if (g) {
      if (name) g.names.push(name);
    } else groups.set(key, { names: name ? [name] : [], first: m });
  }
  return [...groups.values()].map((g) =>
    g.names.length > 1
      ? `${g.names.length} motors (${g.names.join(', ')}): ${g.first.replace(THE_MOTOR, 'each').replace(MOTOR_NAME, 'each').replace(CAN_ID, '')}`
      : g.first,
  );
}

/**
 * A long message (a rollout's reason: many fault sentences joined) as a headline and its faults,
 * grouped: "Rollout 3 is invalid" + ["14 motors (…): each reports loss of communication…"].
 */
export function splitReason(text: string): { head: string; lines: string[] } {
  const m = /^([^:]{1,80}): (The |Not |Emergency )/.exec(text);
  const head = m ? m[1] : '';
  const body = m ? text.slice(m[1].length + 2) : text;
  // Each fault is "The X motor …; advice." — split before the next "The …".
  const parts = body.split(/(?<=\.)\s+(?=The |Not |Emergency )/);
  return { head, lines: groupedFaults(parts) };
}
