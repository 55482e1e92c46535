/**
 * The cell I/O config file: where the cell PLC's OPC UA server is, how to talk to it securely,
 * and which of its nodes are the interlock inputs and the tower light outputs. Node ids are the
 * PLC programmer's, written as OPC UA strings ("ns=3;s=\"Cell\".\"DoorClosed\"", "ns=2;i=1042").
 *
 * Inputs are positive logic, as safety wiring is: true = safe (e-stop circuit OK, door closed,
 * light curtain clear). A wire break, a PLC that stops answering, a bad status all read "not safe".
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export const INTERLOCK_INPUTS = ['estopOk', 'doorClosed', 'lightCurtainClear'] as const;
export type InterlockInput = (typeof INTERLOCK_INPUTS)[number];
export const TOWER_OUTPUTS = ['towerRed', 'towerAmber', 'towerGreen'] as const;
export type TowerOutput = (typeof TOWER_OUTPUTS)[number];

export const SECURITY_MODES = ['None', 'Sign', 'SignAndEncrypt'] as const;
export type SecurityModeName = (typeof SECURITY_MODES)[number];
export const SECURITY_POLICIES = ['None', 'Basic256Sha256', 'Aes128_Sha256_RsaOaep', 'Aes256_Sha256_RsaPss'] as const;
export type SecurityPolicyName = (typeof SECURITY_POLICIES)[number];

/** Operator words for each input, for the sentences that say why the arms are held. */
export const INPUT_WORDS: Readonly<Record<InterlockInput, { readonly what: string; readonly open: string }>> = {
  estopOk: { what: "the cell's e-stop circuit", open: "The cell's e-stop is pressed (its circuit reads not OK)." },
  doorClosed: { what: 'the cell door', open: 'The cell door is open.' },
  lightCurtainClear: { what: 'the light curtain', open: 'The light curtain is broken: something is inside the cell.' },
};

export interface CellIoSecurity {
  readonly mode: SecurityModeName;
  readonly policy: SecurityPolicyName;
  /** The station's client certificate (PEM) and key; default: generated once in the PKI folder. */
  readonly certificateFile?: string;
  readonly privateKeyFile?: string;
  /**
   * Trust a PLC certificate the PKI folder does not know yet. Default: only on loopback (the
   * emulator). For a real PLC, copy its certificate from PKI/rejected/ to PKI/trusted/certs/.
   */
  readonly trustUnknownServerCertificate: boolean;
}

export interface CellIoConfig {
  /** opc.tcp://host:port[/path] of the cell PLC. */
  readonly endpointUrl: string;
  readonly security: CellIoSecurity;
  readonly nodes: Readonly<Record<InterlockInput | TowerOutput, string>> & { readonly heartbeat?: string };
  /** Monitored-item sampling interval; must not exceed the control period. Default 10 ms. */
  readonly samplingIntervalMs: number;
  /** Nothing heard from the PLC (values, keep-alives, heartbeat changes) for this long → open. Default 500 ms. */
  readonly staleAfterMs: number;
  /** The PKI folder (own certificate, trusted/rejected PLC certificates); default <data dir>/cell-io-pki. */
  readonly pkiDir?: string;
  /** The station's own OPC UA server for the factory side; absent = not served. */
  readonly station?: StationServerConfig;
}

export class CellIoConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CellIoConfigError';
  }
}

export const DEFAULT_SAMPLING_INTERVAL_MS = 10;
export const DEFAULT_STALE_AFTER_MS = 500;

/** The station's own OPC UA server: where it binds, and off loopback the one user it lets in. */
export interface StationServerConfig {
  readonly port: number;
  /** The address it binds; default 127.0.0.1. */
  readonly host: string;
  /** Required off loopback: no anonymous session, no security None there. */
  readonly user?: { readonly name: string; readonly passwordFile: string };
}

/** True for a host name or address that only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** True for 127.x, ::1 and localhost: the only hosts security mode None is accepted for by default. */
export function isLoopbackEndpoint(endpointUrl: string): boolean {
  const host = /^opc\.tcp:\/\/(\[[^\]]+\]|[^:/]+)/.exec(endpointUrl)?.[1] ?? '';
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function fail(file: string, what: string): never {
  throw new CellIoConfigError(`The cell I/O config ${file} ${what}`);
}

function str(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** A value as a sentence quotes it: its JSON cut to 60 characters; one too deeply nested to print is named, not printed. */
function quoted(v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    return Array.isArray(v) ? 'a list nested too deeply to show' : 'an object nested too deeply to show';
  }
  if (s === undefined) return String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** A field name as a sentence quotes it: cut to 40 characters. */
function named(k: string): string {
  return k.length > 40 ? `${k.slice(0, 37)}…` : k;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A misspelt field must not silently fall back to a default (a typo'd staleAfterMs, a security mode ignored). */
function onlyKnown(file: string, o: Record<string, unknown>, where: string, known: readonly string[]): void {
  const extra = Object.keys(o).find((k) => !known.includes(k));
  if (extra !== undefined)
    fail(file, `has unknown field ${where}${named(extra)}; remove it (known: ${known.join(', ')}).`);
}

const FIELDS = ['endpointUrl', 'security', 'nodes', 'samplingIntervalMs', 'staleAfterMs', 'pkiDir', 'station'] as const;
const SECURITY_FIELDS = [
  'mode',
  'policy',
  'certificateFile',
  'privateKeyFile',
  'trustUnknownServerCertificate',
  'allowInsecure',
] as const;

/** Checks a parsed config; relative file names are resolved against `baseDir`. */
export function parseCellIoConfig(raw: unknown, file = '(inline)', baseDir = '.'): CellIoConfig {
  if (!isObject(raw)) fail(file, 'must be a JSON object with endpointUrl and nodes.');
  const c = raw;
  onlyKnown(file, c, '', FIELDS);
  if (!str(c.endpointUrl) || c.endpointUrl.length > 1024 || !/^opc\.tcp:\/\/[^/\s]+\S*$/.test(c.endpointUrl))
    fail(file, `needs "endpointUrl": "opc.tcp://host:port", not ${quoted(c.endpointUrl)}.`);
  const n = c.nodes;
  if (n === null || typeof n !== 'object' || Array.isArray(n))
    fail(
      file,
      `needs "nodes": {${[...INTERLOCK_INPUTS, ...TOWER_OUTPUTS].map((k) => `"${k}"`).join(', ')}, "heartbeat"?} with OPC UA node ids.`,
    );
  const nodes = n as Record<string, unknown>;
  onlyKnown(file, nodes, 'nodes.', [...INTERLOCK_INPUTS, 'heartbeat', ...TOWER_OUTPUTS]);
  for (const k of [...INTERLOCK_INPUTS, ...TOWER_OUTPUTS]) {
    if (!str(nodes[k]) || !/^(ns=\d+;)?[isgb]=/.test(nodes[k]))
      fail(file, `needs nodes.${k} as an OPC UA node id like "ns=2;s=Cell.DoorClosed", not ${quoted(nodes[k])}.`);
  }
  if (nodes.heartbeat !== undefined && (!str(nodes.heartbeat) || !/^(ns=\d+;)?[isgb]=/.test(nodes.heartbeat)))
    fail(file, `has nodes.heartbeat ${quoted(nodes.heartbeat)}, which is not an OPC UA node id.`);
  // Absent means the default; null or any other wrong value is refused, never read as the default.
  const s = c.security === undefined ? { mode: 'None', policy: 'None' } : c.security;
  if (!isObject(s))
    fail(
      file,
      `has "security" ${quoted(s)}; write an object like {"mode": "SignAndEncrypt", "policy": "Basic256Sha256"}.`,
    );
  onlyKnown(file, s, 'security.', SECURITY_FIELDS);
  if (s.allowInsecure !== undefined && typeof s.allowInsecure !== 'boolean')
    fail(file, 'has a security.allowInsecure that is not true or false.');
  const mode = s.mode === undefined ? 'None' : s.mode;
  const policy = s.policy === undefined ? (mode === 'None' ? 'None' : 'Basic256Sha256') : s.policy;
  if (!SECURITY_MODES.includes(mode as SecurityModeName))
    fail(file, `has security.mode ${quoted(mode)}; use one of ${SECURITY_MODES.join(', ')}.`);
  if (!SECURITY_POLICIES.includes(policy as SecurityPolicyName))
    fail(file, `has security.policy ${quoted(policy)}; use one of ${SECURITY_POLICIES.join(', ')}.`);
  if ((mode === 'None') !== (policy === 'None'))
    fail(
      file,
      `pairs security.mode ${String(mode)} with security.policy ${String(policy)}; mode None goes with policy None only.`,
    );
  const loopback = isLoopbackEndpoint(c.endpointUrl);
  if (mode === 'None' && !loopback && s.allowInsecure !== true) {
    fail(
      file,
      `talks to ${c.endpointUrl} without security (mode None); a PLC on the network needs "security": {"mode": "SignAndEncrypt", "policy": "Basic256Sha256"} (or "allowInsecure": true on an isolated cell network).`,
    );
  }
  const fileOpt = (k: string): string | undefined => {
    const v = s[k];
    if (v === undefined) return undefined;
    if (!str(v)) fail(file, `has security.${k} ${quoted(v)}; give a file name.`);
    return resolve(baseDir, v);
  };
  const certificateFile = fileOpt('certificateFile');
  const privateKeyFile = fileOpt('privateKeyFile');
  if ((certificateFile === undefined) !== (privateKeyFile === undefined))
    fail(
      file,
      'needs security.certificateFile and security.privateKeyFile together (or neither: one is generated in the PKI folder).',
    );
  const trust = s.trustUnknownServerCertificate === undefined ? loopback : s.trustUnknownServerCertificate;
  if (typeof trust !== 'boolean') fail(file, 'has a security.trustUnknownServerCertificate that is not true or false.');
  const num = (k: string, def: number, min: number, max: number): number => {
    const v = c[k] === undefined ? def : c[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      fail(file, `has ${k} ${quoted(c[k])}; give milliseconds from ${min} to ${max}.`);
    return v;
  };
  const samplingIntervalMs = num('samplingIntervalMs', DEFAULT_SAMPLING_INTERVAL_MS, 0, 1000);
  const staleAfterMs = num('staleAfterMs', DEFAULT_STALE_AFTER_MS, 50, 10_000);
  let station: CellIoConfig['station'];
  if (c.station !== undefined) {
    const st = c.station;
    if (!isObject(st)) fail(file, `has "station" ${quoted(st)}; write an object like {"port": 4841}.`);
    onlyKnown(file, st, 'station.', ['port', 'host', 'user']);
    const port = st.port;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
      fail(file, `has station.port ${quoted(port)}; give a TCP port (0 for any free one).`);
    const host = st.host === undefined ? '127.0.0.1' : st.host;
    if (!str(host) || host.length > 253 || !/^[A-Za-z0-9.:[\]-]+$/.test(host))
      fail(file, `has station.host ${quoted(host)}, which is not a host name or address.`);
    let user: StationServerConfig['user'];
    if (st.user !== undefined) {
      const u = st.user;
      if (!isObject(u) || !str(u.name) || !str(u.passwordFile))
        fail(file, 'has a station.user without "name" and "passwordFile" (a file holding the password).');
      onlyKnown(file, u, 'station.user.', ['name', 'passwordFile']);
      user = { name: u.name, passwordFile: resolve(baseDir, u.passwordFile) };
    }
    if (!isLoopbackHost(host) && !user) {
      fail(
        file,
        `serves the station's OPC UA server on ${host}, off this machine, without a user; add "user": {"name": …, "passwordFile": …} to "station" (anonymous sessions are refused off loopback).`,
      );
    }
    station = { port, host, ...(user ? { user } : {}) };
  }
  if (c.pkiDir !== undefined && !str(c.pkiDir)) fail(file, 'has a pkiDir that is not a folder name.');
  return {
    endpointUrl: c.endpointUrl,
    security: {
      mode: mode as SecurityModeName,
      policy: policy as SecurityPolicyName,
      certificateFile,
      privateKeyFile,
      trustUnknownServerCertificate: trust,
    },
    nodes: {
      estopOk: nodes.estopOk as string,
      doorClosed: nodes.doorClosed as string,
      lightCurtainClear: nodes.lightCurtainClear as string,
      towerRed: nodes.towerRed as string,
      towerAmber: nodes.towerAmber as string,
      towerGreen: nodes.towerGreen as string,
      ...(nodes.heartbeat !== undefined ? { heartbeat: nodes.heartbeat as string } : {}),
    },
    samplingIntervalMs,
    staleAfterMs,
    ...(str(c.pkiDir) ? { pkiDir: resolve(baseDir, c.pkiDir) } : {}),
    ...(station ? { station } : {}),
  };
}

export function readCellIoConfig(file: string): CellIoConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CellIoConfigError(
      `Cannot read the cell I/O config ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}.`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CellIoConfigError(`The cell I/O config ${file} is not valid JSON: ${(e as Error).message}.`);
  }
  return parseCellIoConfig(raw, file, dirname(file));
}
