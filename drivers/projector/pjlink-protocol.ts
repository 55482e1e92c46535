/**
 * PJLink class 1 (JBMIA's projector control standard) on the wire, shared by the client and the
 * emulator so both speak exactly the same bytes.
 *
 * - TCP port 4352, ASCII, every message ends in CR (0x0D).
 * - On connect the projector greets: `PJLINK 0` (no password) or `PJLINK 1 <random>` (8
 *   characters). With a password the controller puts MD5(random + password), 32 lowercase hex
 *   digits, in front of its first command on the connection.
 * - Command: `%1` + 4-letter body + space + parameter (`?` to query), e.g. `%1POWR 1`, `%1AVMT ?`.
 * - Reply: `%1` + body + `=` + result: `OK`, a value, or ERR1 (undefined command), ERR2 (out of
 *   parameter), ERR3 (unavailable time: warming up, cooling, standby), ERR4 (projector/display
 *   failure). A wrong password is answered `PJLINK ERRA` and the connection closed.
 */
import { createHash } from 'node:crypto';

export const PJLINK_PORT = 4352;
export const CR = '\r';
/** The longest command the standard allows, CR included. */
export const MAX_COMMAND_BYTES = 136;

/** The four-letter command bodies class 1 defines (the ones tandem uses, and a few queries). */
export type PjlinkBody =
  | 'POWR'
  | 'AVMT'
  | 'INPT'
  | 'ERST'
  | 'LAMP'
  | 'NAME'
  | 'INF1'
  | 'INF2'
  | 'INFO'
  | 'CLSS'
  | 'INST';

export type PjlinkErrorCode = 'ERR1' | 'ERR2' | 'ERR3' | 'ERR4';

/** POWR ? results. */
export const POWER_STATES = { '0': 'standby', '1': 'on', '2': 'cooling', '3': 'warming-up' } as const;
export type PowerState = (typeof POWER_STATES)[keyof typeof POWER_STATES];

/** The power state a `POWR ?` result names, or undefined for anything PJLink does not define (own keys only: a projector cannot answer 'constructor'). */
export function powerStateOf(result: string): PowerState | undefined {
  return Object.hasOwn(POWER_STATES, result) ? POWER_STATES[result as keyof typeof POWER_STATES] : undefined;
}

/** AVMT parameters: video (1x), audio (2x), both (3x); x = 1 mute on, 0 off. */
export const AV_MUTE_ON = '31';
export const AV_MUTE_OFF = '30';

/** The digest a controller sends: MD5 of the projector's random followed by the password. */
export function pjlinkDigest(random: string, password: string): string {
  return createHash('md5')
    .update(random + password, 'utf8')
    .digest('hex');
}

export function formatCommand(body: PjlinkBody, param: string, digest = ''): string {
  return `${digest}%1${body} ${param}${CR}`;
}

/** Parses a `%1BODY=RESULT` reply. */
export function parseReply(line: string): { body: string; result: string } | undefined {
  const m = /^%1([A-Z0-9]{4})=(.*)$/.exec(line);
  return m ? { body: m[1], result: m[2] } : undefined;
}

/** ERST ? result: six digits, fan, lamp, temperature, cover, filter, other; 0 ok, 1 warning, 2 error. */
export const ERST_PARTS = ['fan', 'lamp', 'temperature', 'cover', 'filter', 'other'] as const;
export type ErrorStatus = Readonly<Record<(typeof ERST_PARTS)[number], 'ok' | 'warning' | 'error'>>;

export function parseErrorStatus(result: string): ErrorStatus | undefined {
  if (!/^[012]{6}$/.test(result)) return undefined;
  const word = (d: string) => (d === '0' ? 'ok' : d === '1' ? 'warning' : 'error');
  return Object.fromEntries(ERST_PARTS.map((p, i) => [p, word(result[i])])) as unknown as ErrorStatus;
}
