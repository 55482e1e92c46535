/**
 * A PJLink class 1 controller: power, AV mute, input, error status, over TCP.
 *
 * One connection per command: connect, read the greeting, (authenticate), send, read the reply,
 * close. Projectors drop idle connections after about 30 s and many accept only one controller
 * at a time, so holding a socket open between a session's rare commands would only add ways to
 * fail. Every step runs under one deadline, and each failure is one sentence naming the
 * projector and what to do.
 */
import { Socket } from 'node:net';
import {
  AV_MUTE_OFF,
  AV_MUTE_ON,
  CR,
  formatCommand,
  parseErrorStatus,
  parseReply,
  powerStateOf,
  pjlinkDigest,
  PJLINK_PORT,
  type ErrorStatus,
  type PjlinkBody,
  type PowerState,
} from './pjlink-protocol.js';

export type PjlinkFailure =
  | 'unreachable'
  | 'timeout'
  | 'auth-refused'
  | 'password-needed'
  | 'unavailable'
  | 'undefined-command'
  | 'out-of-parameter'
  | 'projector-failure'
  | 'protocol';

export class PjlinkError extends Error {
  constructor(
    message: string,
    readonly failure: PjlinkFailure,
  ) {
    super(message);
    this.name = 'PjlinkError';
  }
}

export interface PjlinkClientOptions {
  readonly host: string;
  readonly port?: number;
  /** The projector's PJLink password, when it has one. */
  readonly password?: string;
  /** Deadline for one whole command (connect, greeting, reply), ms. */
  readonly timeoutMs?: number;
}

/** Parses HOST[:PORT] (port defaults to PJLink's 4352). */
export function parsePjlinkAddress(text: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(text.trim());
  const port = m?.[2] === undefined ? PJLINK_PORT : Number(m[2]);
  if (!m || port < 1 || port > 65535)
    throw new PjlinkError(
      `'${text}' is not a projector address; give it as HOST or HOST:PORT, e.g. 192.168.1.50:4352.`,
      'protocol',
    );
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

export class PjlinkClient {
  readonly host: string;
  readonly port: number;
  private readonly password: string | undefined;
  private readonly timeoutMs: number;

  constructor(opts: PjlinkClientOptions) {
    this.host = opts.host;
    this.port = opts.port ?? PJLINK_PORT;
    this.password = opts.password;
    this.timeoutMs = opts.timeoutMs ?? 5000;
  }

  private get where(): string {
    return `The projector at ${this.host}:${this.port}`;
  }

  /** Sends one command and returns its result ('OK' or a value); PJLink errors become PjlinkErrors. */
  command(body: PjlinkBody, param: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      let buffer = '';
      let stage: 'connecting' | 'greeting' | 'reply' = 'connecting';
      let settled = false;
      const finish = (err: PjlinkError | undefined, result?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        if (err) reject(err);
        else resolve(result ?? '');
      };
      const timer = setTimeout(() => {
        const doing =
          stage === 'connecting'
            ? 'did not accept a connection'
            : stage === 'greeting'
              ? 'accepted the connection but sent no PJLink greeting'
              : `did not answer '${body} ${param}'`;
        finish(
          new PjlinkError(
            `${this.where} ${doing} within ${this.timeoutMs} ms; check the address, that PJLink is enabled on it, and that no other controller holds its connection.`,
            'timeout',
          ),
        );
      }, this.timeoutMs);
      socket.setNoDelay(true);
      socket.on('error', (e: NodeJS.ErrnoException) => {
        if (stage === 'connecting') {
          finish(
            new PjlinkError(
              `${this.where} cannot be reached (${e.code ?? e.message}); check that it is on the network with network standby enabled, and the address.`,
              'unreachable',
            ),
          );
        } else {
          finish(
            new PjlinkError(
              `${this.where} dropped the connection (${e.code ?? e.message}) during '${body} ${param}'; try again, and check its network cable.`,
              'unreachable',
            ),
          );
        }
      });
      socket.on('close', () =>
        finish(
          new PjlinkError(
            `${this.where} closed the connection before answering '${body} ${param}'; try again, and check that no other controller is using it.`,
            'protocol',
          ),
        ),
      );
      socket.on('connect', () => {
        stage = 'greeting';
      });
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        if (buffer.length > 512)
          return finish(
            new PjlinkError(
              `${this.where} sent a line longer than PJLink allows; it may not be a PJLink projector.`,
              'protocol',
            ),
          );
        let end: number;
        while ((end = buffer.indexOf(CR)) >= 0) {
          const line = buffer.slice(0, end).replace(/^\n/, '');
          buffer = buffer.slice(end + 1);
          if (stage === 'greeting') this.onGreeting(line, socket, body, param, finish, () => (stage = 'reply'));
          else if (stage === 'reply') this.onReply(line, body, param, finish);
        }
      });
      socket.connect(this.port, this.host);
    });
  }

  private onGreeting(
    line: string,
    socket: Socket,
    body: PjlinkBody,
    param: string,
    finish: (err: PjlinkError | undefined, result?: string) => void,
    sent: () => void,
  ): void {
    const m = /^PJLINK ([01])(?: (\S{1,32}))?$/.exec(line);
    if (!m)
      return finish(
        new PjlinkError(
          `${this.where} greeted with '${line.slice(0, 40)}', not PJLink; check the port (PJLink uses 4352).`,
          'protocol',
        ),
      );
    let digest = '';
    if (m[1] === '1') {
      if (!m[2])
        return finish(
          new PjlinkError(
            `${this.where} asked for a password without the random number PJLink needs; it is not speaking PJLink correctly.`,
            'protocol',
          ),
        );
      if (this.password === undefined) {
        return finish(
          new PjlinkError(
            `${this.where} asks for a PJLink password and none is set; set TANDEM_PJLINK_PASSWORD to the password configured on the projector.`,
            'password-needed',
          ),
        );
      }
      digest = pjlinkDigest(m[2], this.password);
    }
    socket.write(formatCommand(body, param, digest), 'latin1');
    sent();
  }

  private onReply(
    line: string,
    body: PjlinkBody,
    param: string,
    finish: (err: PjlinkError | undefined, result?: string) => void,
  ): void {
    if (line === 'PJLINK ERRA') {
      return finish(
        new PjlinkError(
          `${this.where} refused the PJLink password; set TANDEM_PJLINK_PASSWORD to the password configured on the projector.`,
          'auth-refused',
        ),
      );
    }
    const reply = parseReply(line);
    if (!reply || reply.body !== body)
      return finish(
        new PjlinkError(
          `${this.where} answered '${line.slice(0, 40)}' to '${body} ${param}'; it is not speaking PJLink class 1 correctly.`,
          'protocol',
        ),
      );
    const what = `'${body} ${param}'`;
    switch (reply.result) {
      case 'ERR1':
        return finish(
          new PjlinkError(
            `${this.where} does not know the command ${what} (ERR1); it may not support it.`,
            'undefined-command',
          ),
        );
      case 'ERR2':
        return finish(
          new PjlinkError(
            `${this.where} refused the parameter of ${what} (ERR2); it may not have that input or setting.`,
            'out-of-parameter',
          ),
        );
      case 'ERR3':
        return finish(
          new PjlinkError(
            `${this.where} cannot do ${what} right now (ERR3: unavailable time — it is warming up, cooling down or in standby); wait until it is on and warmed up, then try again.`,
            'unavailable',
          ),
        );
      case 'ERR4':
        return finish(
          new PjlinkError(
            `${this.where} reports a projector failure (ERR4) on ${what}; check its lamp, fan and cover ('tandem projector status').`,
            'projector-failure',
          ),
        );
      default:
        return finish(undefined, reply.result);
    }
  }

  async powerState(): Promise<PowerState> {
    const r = await this.command('POWR', '?');
    const state = powerStateOf(r);
    if (!state)
      throw new PjlinkError(
        `${this.where} answered '${r}' for its power state, which PJLink does not define.`,
        'protocol',
      );
    return state;
  }

  async powerOn(): Promise<void> {
    await this.command('POWR', '1');
  }

  async powerOff(): Promise<void> {
    await this.command('POWR', '0');
  }

  /**
   * Powers on and waits until the lamp has warmed up (PJLink answers ERR3 to AV mute and input
   * commands until then). Resolves with how long it took.
   */
  async powerOnAndWait(opts: { timeoutMs: number; pollMs?: number }): Promise<number> {
    const start = Date.now();
    await this.powerOn();
    for (;;) {
      const state = await this.powerState();
      if (state === 'on') return Date.now() - start;
      if (state === 'standby' || state === 'cooling')
        throw new PjlinkError(
          `${this.where} went to ${state} instead of warming up after 'POWR 1'; check it for a fault ('tandem projector status').`,
          'projector-failure',
        );
      if (Date.now() - start > opts.timeoutMs)
        throw new PjlinkError(
          `${this.where} was still warming up after ${Math.round(opts.timeoutMs / 1000)} s; wait, or check its lamp.`,
          'timeout',
        );
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
    }
  }

  /** AV mute (picture and sound) on or off: the projector goes dark without losing the image source. */
  async setAvMute(muted: boolean): Promise<void> {
    await this.command('AVMT', muted ? AV_MUTE_ON : AV_MUTE_OFF);
  }

  /** True when the picture is muted (video or both). */
  async avMuted(): Promise<boolean> {
    const r = await this.command('AVMT', '?');
    if (!/^[123][01]$/.test(r))
      throw new PjlinkError(
        `${this.where} answered '${r}' for its AV mute state, which PJLink does not define.`,
        'protocol',
      );
    return (r[0] === '1' || r[0] === '3') && r[1] === '1';
  }

  async input(): Promise<string> {
    return this.command('INPT', '?');
  }

  async setInput(input: string): Promise<void> {
    if (!/^[1-5][1-9]$/.test(input))
      throw new PjlinkError(
        `'${input}' is not a PJLink input; give its type digit (1 RGB, 2 video, 3 digital, 4 storage, 5 network) and number, e.g. 31.`,
        'out-of-parameter',
      );
    await this.command('INPT', input);
  }

  /** Fan, lamp, temperature, cover, filter and other faults. */
  async errorStatus(): Promise<ErrorStatus> {
    const r = await this.command('ERST', '?');
    const s = parseErrorStatus(r);
    if (!s)
      throw new PjlinkError(
        `${this.where} answered '${r}' for its error status, which PJLink does not define.`,
        'protocol',
      );
    return s;
  }
}
