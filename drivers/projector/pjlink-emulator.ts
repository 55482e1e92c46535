/**
 * A PJLink class 1 projector on a real TCP socket (loopback by default), for tests and for
 * rehearsing a session without a projector: the same bytes as a real one, with a lamp that
 * takes time to warm up and cool down, an optional password, and typed faults.
 *
 * Behaviour follows the standard: queries always answer; in standby, warm-up and cool-down,
 * AV mute and input commands answer ERR3 (unavailable time); POWR 1 while warming up is OK,
 * POWR 0 while warming up is ERR3; a wrong password is answered `PJLINK ERRA` and the
 * connection closed; a connection idle for `idleCloseMs` (30 s on real projectors) is closed.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { AV_MUTE_OFF, AV_MUTE_ON, CR, MAX_COMMAND_BYTES, pjlinkDigest, type PowerState } from './pjlink-protocol.js';

/**
 * - silent: accepts connections and never says anything (a dead socket, a hung firmware).
 * - hang-up: greets, then closes the connection on the first command.
 * - lamp-failure: ERST reports a lamp error and POWR 1 answers ERR4.
 */
export type PjlinkFault = 'silent' | 'hang-up' | 'lamp-failure';

export interface PjlinkEmulatorOptions {
  readonly host?: string;
  /** 0 (default): any free port. */
  readonly port?: number;
  readonly password?: string;
  readonly warmUpMs?: number;
  readonly coolDownMs?: number;
  readonly idleCloseMs?: number;
  /** Starts powered on and warmed up (default: standby). */
  readonly poweredOn?: boolean;
  readonly inputs?: readonly string[];
}

export interface PjlinkEmulatorState {
  readonly power: PowerState;
  readonly avMuted: boolean;
  readonly input: string;
  /** Every command line received (digest stripped), in order. */
  readonly commands: readonly string[];
  readonly connections: number;
}

export class PjlinkEmulator {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private power: PowerState;
  private powerTimer: NodeJS.Timeout | undefined;
  private avMuted = false;
  private input: string;
  private readonly commands: string[] = [];
  private connections = 0;
  private fault: PjlinkFault | undefined;
  private readonly opts: Required<Omit<PjlinkEmulatorOptions, 'password'>> & { password: string | undefined };

  constructor(opts: PjlinkEmulatorOptions = {}) {
    this.opts = {
      host: opts.host ?? '127.0.0.1',
      port: opts.port ?? 0,
      password: opts.password,
      warmUpMs: opts.warmUpMs ?? 1500,
      coolDownMs: opts.coolDownMs ?? 1000,
      idleCloseMs: opts.idleCloseMs ?? 30_000,
      poweredOn: opts.poweredOn ?? false,
      inputs: opts.inputs ?? ['11', '31', '32'],
    };
    this.power = this.opts.poweredOn ? 'on' : 'standby';
    this.input = this.opts.inputs.includes('31') ? '31' : this.opts.inputs[0];
  }

  /** Listens; resolves with the port. */
  async start(): Promise<number> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('the PJLink emulator has no TCP address');
    return addr.port;
  }

  get port(): number {
    const addr = this.server?.address();
    return addr && typeof addr !== 'string' ? addr.port : 0;
  }

  get host(): string {
    return this.opts.host;
  }

  setFault(fault: PjlinkFault | undefined): void {
    this.fault = fault;
  }

  state(): PjlinkEmulatorState {
    return {
      power: this.power,
      avMuted: this.avMuted,
      input: this.input,
      commands: [...this.commands],
      connections: this.connections,
    };
  }

  async close(): Promise<void> {
    clearTimeout(this.powerTimer);
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(socket: Socket): void {
    this.connections++;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (this.fault === 'silent') return;
    const random = randomBytes(4).toString('hex');
    let authenticated = this.opts.password === undefined;
    let buffer = '';
    let idle = setTimeout(() => socket.destroy(), this.opts.idleCloseMs);
    socket.write(this.opts.password === undefined ? `PJLINK 0${CR}` : `PJLINK 1 ${random}${CR}`, 'latin1');
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_COMMAND_BYTES + 32 && !buffer.includes(CR)) return socket.destroy();
      let end: number;
      while ((end = buffer.indexOf(CR)) >= 0) {
        let line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        clearTimeout(idle);
        idle = setTimeout(() => socket.destroy(), this.opts.idleCloseMs);
        if (this.fault === 'hang-up') return socket.destroy();
        if (!authenticated) {
          const digest = line.slice(0, 32);
          if (digest !== pjlinkDigest(random, this.opts.password ?? '')) {
            socket.end(`PJLINK ERRA${CR}`, 'latin1');
            return;
          }
          authenticated = true;
          line = line.slice(32);
        }
        this.commands.push(line);
        socket.write(`${this.answer(line)}${CR}`, 'latin1');
      }
    });
  }

  private setPower(target: 'on' | 'standby'): void {
    clearTimeout(this.powerTimer);
    this.power = target === 'on' ? 'warming-up' : 'cooling';
    this.powerTimer = setTimeout(
      () => {
        this.power = target;
        if (target === 'standby') this.avMuted = false;
      },
      target === 'on' ? this.opts.warmUpMs : this.opts.coolDownMs,
    );
  }

  private answer(line: string): string {
    const m = /^%1([A-Z0-9]{4}) (.*)$/.exec(line);
    if (!m) return `%1${line.slice(2, 6).padEnd(4, '?')}=ERR1`;
    const [, body, param] = m;
    const reply = (r: string) => `%1${body}=${r}`;
    const ready = this.power === 'on';
    switch (body) {
      case 'POWR':
        if (param === '?') return reply({ standby: '0', on: '1', cooling: '2', 'warming-up': '3' }[this.power]);
        if (param === '1') {
          if (this.fault === 'lamp-failure') return reply('ERR4');
          if (this.power === 'cooling') return reply('ERR3');
          if (this.power === 'standby') this.setPower('on');
          return reply('OK');
        }
        if (param === '0') {
          if (this.power === 'warming-up') return reply('ERR3');
          if (this.power === 'on') this.setPower('standby');
          return reply('OK');
        }
        return reply('ERR2');
      case 'AVMT':
        if (param === '?') return ready ? reply(this.avMuted ? AV_MUTE_ON : AV_MUTE_OFF) : reply('ERR3');
        if (!/^[123][01]$/.test(param)) return reply('ERR2');
        if (!ready) return reply('ERR3');
        // Video (1x) or both (3x) decide the picture; audio alone (2x) leaves it.
        if (param[0] !== '2') this.avMuted = param[1] === '1';
        return reply('OK');
      case 'INPT':
        if (param === '?') return ready ? reply(this.input) : reply('ERR3');
        if (!this.opts.inputs.includes(param)) return reply('ERR2');
        if (!ready) return reply('ERR3');
        this.input = param;
        return reply('OK');
      case 'ERST':
        return param === '?' ? reply(this.fault === 'lamp-failure' ? '020000' : '000000') : reply('ERR2');
      case 'LAMP':
        return param === '?' ? reply(`1234 ${ready ? 1 : 0}`) : reply('ERR2');
      case 'NAME':
        return param === '?' ? reply('tandem emulated projector') : reply('ERR2');
      case 'INF1':
        return param === '?' ? reply('tandem') : reply('ERR2');
      case 'INF2':
        return param === '?' ? reply('PJLink emulator') : reply('ERR2');
      case 'CLSS':
        return param === '?' ? reply('1') : reply('ERR2');
      case 'INST':
        return param === '?' ? reply(this.opts.inputs.join(' ')) : reply('ERR2');
      default:
        return reply('ERR1');
    }
  }
}
