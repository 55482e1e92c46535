/**
 * Layout sets: a task's frozen list of layouts, pinned by the SHA-256 of its RFC 8785 canonical
 * JSON. Same task + tiers + per-tier count + seed gives the same bytes and hash on any machine.
 * Pure: parsing and verifying work on strings; reading and writing files is the app's job.
 */
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { getTask, isTaskId } from '../tasks/registry.js';
import { TABLE_RECT } from '../tasks/station.js';
import { fixtureFootprint, objectFootprint, rectsOverlap, type OrientedRect } from '../tasks/footprint.js';
import {
  TASK_IDS,
  type Layout,
  type LayoutFixture,
  type LayoutObject,
  type Posture,
  type TaskDefinition,
  type TaskId,
} from '../tasks/types.js';
import { LayoutSetError } from './errors.js';
import { createRng } from './random.js';
import { sampleLayouts, TIER_MAX, TIER_MIN } from './sample.js';
import type { LayoutFocusRule } from './focus.js';

export const LAYOUT_SET_FORMAT = 'tandem.layout-set/1';

/** Lineage of a bumped set: the version and hash it was made from (what earlier results point at). */
export interface LayoutSetLineage {
  readonly version: number;
  readonly sha256: string;
}

export interface LayoutSetBody {
  readonly format: typeof LAYOUT_SET_FORMAT;
  readonly task: TaskId;
  readonly version: number;
  readonly seed: number;
  readonly tiers: readonly number[];
  readonly previous?: LayoutSetLineage;
  readonly layouts: readonly Layout[];
}

export interface LayoutSet extends LayoutSetBody {
  /** Hex SHA-256 of the canonical JSON of everything else: the set's id. */
  readonly sha256: string;
}

/** The hash that pins a set: hex SHA-256 of the RFC 8785 canonical JSON of the body. */
export function layoutSetHash(body: LayoutSetBody): string {
  const { sha256: _ignored, ...rest } = body as LayoutSetBody & { sha256?: string };
  const canonical = canonicalize(rest);
  if (canonical === undefined) throw new Error('layout set body is not serialisable');
  return bytesToHex(sha256(utf8ToBytes(canonical)));
}

/** Fixes a body with its hash, fields in the file's order. */
export function pinLayoutSet(body: LayoutSetBody): LayoutSet {
  const ordered: LayoutSetBody = {
    format: body.format,
    task: body.task,
    version: body.version,
    seed: body.seed,
    tiers: body.tiers,
    ...(body.previous ? { previous: { version: body.previous.version, sha256: body.previous.sha256 } } : {}),
    layouts: body.layouts,
  };
  return { ...ordered, sha256: layoutSetHash(ordered) };
}

export interface SampleLayoutSetOptions {
  readonly task: string;
  readonly tiers: readonly number[];
  readonly perTier: number;
  readonly seed: number;
  /** Keep only layouts with this many crowded or lying objects (a guided randomization's layouts). */
  readonly focus?: LayoutFocusRule;
}

/** Samples and pins version 1 of a layout set. */
export function sampleLayoutSet(opts: SampleLayoutSetOptions): LayoutSet {
  const task = getTask(opts.task);
  checkTiers(opts.tiers, 'The requested tiers');
  if (!Number.isSafeInteger(opts.perTier) || opts.perTier < 1)
    throw new LayoutSetError(`Layouts per tier must be a whole number of at least 1, not ${opts.perTier}.`);
  if (!Number.isSafeInteger(opts.seed) || opts.seed < 0)
    throw new LayoutSetError(`The seed must be a whole number of 0 or more, not ${opts.seed}.`);
  const layouts = sampleLayouts(task, opts.tiers, opts.perTier, createRng(opts.seed), opts.focus);
  return pinLayoutSet({
    format: LAYOUT_SET_FORMAT,
    task: task.id,
    version: 1,
    seed: opts.seed,
    tiers: [...opts.tiers],
    layouts,
  });
}

/** The file form: pretty JSON with a trailing newline. */
export function serializeLayoutSet(set: LayoutSet): string {
  return `${JSON.stringify(set, null, 2)}\n`;
}

function checkTiers(tiers: unknown, where: string): asserts tiers is number[] {
  if (!Array.isArray(tiers) || tiers.length === 0)
    throw new LayoutSetError(`${where} must list at least one tier from ${TIER_MIN} to ${TIER_MAX}.`);
  for (const t of tiers) {
    if (!Number.isInteger(t) || t < TIER_MIN || t > TIER_MAX)
      throw new LayoutSetError(
        `${where}: tier ${shown(t)} is out of range; tiers run from ${TIER_MIN} to ${TIER_MAX}.`,
      );
  }
  if (new Set(tiers).size !== tiers.length) throw new LayoutSetError(`${where} list a tier twice.`);
}

/**
 * Largest layout-set file read. A 1000-layout tier-5 set is ≈ 2 MiB; 32 MiB leaves room for sets of
 * 10 000 layouts and refuses a runaway file before JSON.parse holds it in memory several times over.
 */
export const MAX_LAYOUT_SET_BYTES = 32 * 2 ** 20;
/** Deepest nesting read: a set nests 6 levels (set → layouts → layout → objects → object → pose); 8 leaves room. */
export const MAX_LAYOUT_SET_DEPTH = 8;

/**
 * Deepest nesting of brackets in a JSON text, outside strings, stopping at `limit + 1`. One pass and
 * no recursion, so it runs before JSON.parse, error messages and hashing could recurse into it.
 */
function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** A value quoted in a message: JSON, cut to 60 characters so one sentence stays one sentence. */
function shown(v: unknown): string {
  const text = JSON.stringify(v ?? null) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** Text quoted in a message, cut to 60 characters. */
const clip = (t: string): string => (t.length > 60 ? `${t.slice(0, 57)}…` : t);

/**
 * Ids name objects in messages, pictures and the store: printable text, 1–64 characters. A lone
 * UTF-16 surrogate (legal in JSON's \u escapes) has no UTF-8 form, so the set could not be hashed.
 */
function checkId(id: string, what: string): void {
  // With the u flag a lone surrogate is its own code point, of category Cs (a pair reads as one astral character).
  if (/\p{Cs}/u.test(id))
    throw new LayoutSetError(`${what} id ${shown(id)} holds a lone UTF-16 surrogate; ids must be printable text.`);
  if (id.length < 1 || id.length > 64 || /\p{C}/u.test(id)) {
    throw new LayoutSetError(
      `${what} id ${shown(id)} is not printable; ids must be 1 to 64 printable characters, without control or format characters.`,
    );
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const POSTURES: readonly Posture[] = ['upright', 'lying', 'upside-down'];
const HEX64 = /^[0-9a-f]{64}$/;

function checkKeys(v: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(v))
    if (!allowed.includes(k))
      throw new LayoutSetError(`${where} has an unexpected field ${shown(k).replace(/^"|"$/g, "'")}.`);
}

/** A yaw is an angle: anything beyond a full turn either way is a damaged number, not a pose. */
const MAX_ABS_YAW_RAD = 2 * Math.PI;

function checkPose(v: unknown, where: string): void {
  if (!isObj(v)) throw new LayoutSetError(`${where} has no pose {"x", "y", "yawRad"}.`);
  checkKeys(v, ['x', 'y', 'yawRad'], `${where}'s pose`);
  for (const k of ['x', 'y', 'yawRad']) {
    if (typeof v[k] !== 'number' || !Number.isFinite(v[k]))
      throw new LayoutSetError(`${where}'s pose needs a number '${k}' (metres or radians).`);
  }
  const { yawRad } = v as { yawRad: number };
  if (Math.abs(yawRad) > MAX_ABS_YAW_RAD)
    throw new LayoutSetError(
      `${where} has yawRad ${yawRad}; a yaw is between ${(-MAX_ABS_YAW_RAD).toFixed(3)} and ${MAX_ABS_YAW_RAD.toFixed(3)} rad.`,
    );
}

const TABLE_AS_RECT: OrientedRect = {
  cx: (TABLE_RECT.xMin + TABLE_RECT.xMax) / 2,
  cy: (TABLE_RECT.yMin + TABLE_RECT.yMax) / 2,
  halfX: (TABLE_RECT.xMax - TABLE_RECT.xMin) / 2,
  halfY: (TABLE_RECT.yMax - TABLE_RECT.yMin) / 2,
  yawRad: 0,
};

/**
 * Objects and fixtures start on the table: some of the footprint must rest on it. Not all of it — a
 * layout may start a bottle hanging over the edge to provoke a fall — but a pose where none of it
 * touches the table (x = 1e299) was edited or damaged, and the sim would drop it into the void.
 */
function checkOnTable(footprint: OrientedRect, pose: { x: number; y: number }, where: string): void {
  if (!rectsOverlap(footprint, TABLE_AS_RECT)) {
    throw new LayoutSetError(
      `${where} is at x = ${pose.x} m, y = ${pose.y} m, off the table: no part of it rests on the table (x from ${TABLE_RECT.xMin} to ${TABLE_RECT.xMax} m, y from ${TABLE_RECT.yMin} to ${TABLE_RECT.yMax} m).`,
    );
  }
}

function checkLayout(task: TaskDefinition, tiers: readonly number[], v: unknown, position: number, src: string): void {
  const where = `${src}: layout ${position}`;
  if (!isObj(v)) throw new LayoutSetError(`${where} is not an object with index, tier, fixtures and objects.`);
  checkKeys(v, ['index', 'tier', 'fixtures', 'objects'], where);
  if (v.index !== position)
    throw new LayoutSetError(`${where} carries index ${shown(v.index)}; layouts must be numbered 0, 1, 2 … in order.`);
  if (!Number.isInteger(v.tier) || (v.tier as number) < TIER_MIN || (v.tier as number) > TIER_MAX) {
    throw new LayoutSetError(
      `${where} has tier ${shown(v.tier)}, which is out of range; tiers run from ${TIER_MIN} to ${TIER_MAX}.`,
    );
  }
  if (!tiers.includes(v.tier as number))
    throw new LayoutSetError(
      `${where} has tier ${v.tier}, which the set's tiers (${tiers.join(', ')}) do not include.`,
    );
  if (!Array.isArray(v.fixtures) || !Array.isArray(v.objects))
    throw new LayoutSetError(`${where} needs a "fixtures" list and an "objects" list.`);
  const fixtureIds = new Set<string>();
  for (const f of v.fixtures as unknown[]) {
    if (!isObj(f) || typeof f.id !== 'string' || typeof f.kind !== 'string')
      throw new LayoutSetError(`${where} has a fixture without a string id and kind.`);
    checkId(f.id, `${where} fixture`);
    checkKeys(f, ['id', 'kind', 'pose'], `${where} fixture '${f.id}'`);
    if (!task.fixtureKinds.some((k) => k.id === f.kind)) {
      throw new LayoutSetError(
        `${where} fixture '${f.id}' has kind '${clip(f.kind)}', which ${task.id} does not know (its fixtures: ${task.fixtureKinds.map((k) => k.id).join(', ') || 'none'}).`,
      );
    }
    checkPose(f.pose, `${where} fixture '${f.id}'`);
    const fixtureKind = task.fixtureKinds.find((k) => k.id === f.kind)!;
    checkOnTable(
      fixtureFootprint(fixtureKind, f.pose as unknown as LayoutFixture['pose']),
      f.pose as { x: number; y: number },
      `${where} fixture '${f.id}'`,
    );
    fixtureIds.add(f.id);
  }
  const ids = new Set<string>();
  for (const o of v.objects as unknown[]) {
    if (!isObj(o) || typeof o.id !== 'string' || typeof o.kind !== 'string')
      throw new LayoutSetError(`${where} has an object without a string id and kind.`);
    checkId(o.id, `${where} object`);
    const what = `${where} object '${o.id}'`;
    checkKeys(o, ['id', 'kind', 'posture', 'pose', 'inFixture'], what);
    if (ids.has(o.id)) throw new LayoutSetError(`${where} has two objects with id '${o.id}'.`);
    ids.add(o.id);
    if (!task.objectKinds.some((k) => k.id === o.kind)) {
      throw new LayoutSetError(
        `${what} has kind '${clip(o.kind)}', which ${task.id} does not know (its kinds: ${task.objectKinds.map((k) => k.id).join(', ')}).`,
      );
    }
    if (!POSTURES.includes(o.posture as Posture))
      throw new LayoutSetError(`${what} has posture ${shown(o.posture)}; it must be one of ${POSTURES.join(', ')}.`);
    checkPose(o.pose, what);
    const objectKind = task.objectKinds.find((k) => k.id === o.kind)!;
    checkOnTable(
      objectFootprint(objectKind, o.posture as Posture, o.pose as unknown as LayoutObject['pose']),
      o.pose as { x: number; y: number },
      what,
    );
    if (o.inFixture !== undefined && (typeof o.inFixture !== 'string' || !fixtureIds.has(o.inFixture))) {
      throw new LayoutSetError(
        `${what} starts in fixture ${shown(o.inFixture)}, which layout ${position} does not have.`,
      );
    }
  }
}

export interface ParseOptions {
  /** Refuse a set whose recorded hash differs from its contents (default true; bump turns it off). */
  readonly checkHash?: boolean;
}

/**
 * Reads a layout set from its text. `source` names it in messages (the file path). Throws
 * LayoutSetError with one sentence for malformed or truncated JSON, a wrong format, an unknown
 * task, a tier out of range, unknown kinds, and — unless checkHash is false — a hash mismatch.
 */
export function parseLayoutSet(text: string, source: string, opts: ParseOptions = {}): LayoutSet {
  // Size and depth first: JSON.parse, the messages below and canonical hashing all recurse or copy.
  if (text.length > MAX_LAYOUT_SET_BYTES) {
    throw new LayoutSetError(
      `${source} is ${(text.length / 2 ** 20).toFixed(1)} MiB; a layout set is at most ${MAX_LAYOUT_SET_BYTES / 2 ** 20} MiB, so this is not one or it is damaged.`,
    );
  }
  if (jsonDepth(text, MAX_LAYOUT_SET_DEPTH) > MAX_LAYOUT_SET_DEPTH) {
    throw new LayoutSetError(
      `${source} nests deeper than ${MAX_LAYOUT_SET_DEPTH} levels; a layout set nests 6, so this is not one or it is damaged.`,
    );
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    // V8 quotes the text around the error; keep that on one line and short.
    const why = clip((e as Error).message.replace(/[\p{C}\s]+/gu, ' ').trim());
    throw new LayoutSetError(`${source} is not valid JSON (${why}); the file may be truncated or damaged.`);
  }
  if (!isObj(v))
    throw new LayoutSetError(
      `${source} is not a layout set: expected a JSON object with "format": "${LAYOUT_SET_FORMAT}".`,
    );
  if (v.format !== LAYOUT_SET_FORMAT) {
    throw new LayoutSetError(
      `${source} has format ${shown(v.format)}, not "${LAYOUT_SET_FORMAT}"; it is not a layout set this tandem reads.`,
    );
  }
  checkKeys(v, ['format', 'task', 'version', 'seed', 'tiers', 'previous', 'layouts', 'sha256'], source);
  if (!isTaskId(v.task))
    throw new LayoutSetError(`${source} is for unknown task ${shown(v.task)}; known tasks: ${TASK_IDS.join(', ')}.`);
  const task = getTask(v.task);
  if (!Number.isSafeInteger(v.version) || (v.version as number) < 1)
    throw new LayoutSetError(`${source} has version ${shown(v.version)}; it must be a whole number of 1 or more.`);
  if (!Number.isSafeInteger(v.seed) || (v.seed as number) < 0)
    throw new LayoutSetError(`${source} has seed ${shown(v.seed)}; it must be a whole number of 0 or more.`);
  checkTiers(v.tiers, `${source}'s tiers`);
  if (v.previous !== undefined) {
    const p = v.previous;
    if (
      !isObj(p) ||
      !Number.isSafeInteger(p.version) ||
      (p.version as number) < 1 ||
      (p.version as number) >= (v.version as number) ||
      typeof p.sha256 !== 'string' ||
      !HEX64.test(p.sha256)
    ) {
      throw new LayoutSetError(
        `${source} has a malformed "previous" field; it must be {"version": N, "sha256": "<64 hex digits>"} with N from 1 to the set's version − 1.`,
      );
    }
    checkKeys(p, ['version', 'sha256'], `${source}'s "previous"`);
  }
  if (!Array.isArray(v.layouts) || v.layouts.length === 0) throw new LayoutSetError(`${source} has no layouts.`);
  for (const [i, l] of (v.layouts as unknown[]).entries()) checkLayout(task, v.tiers, l, i, source);
  const body = v as unknown as LayoutSetBody & { sha256?: unknown };
  if (opts.checkHash === false) {
    const stored = typeof body.sha256 === 'string' && HEX64.test(body.sha256) ? body.sha256 : '';
    return { ...body, sha256: stored } as LayoutSet;
  }
  if (typeof body.sha256 !== 'string' || !HEX64.test(body.sha256)) {
    throw new LayoutSetError(
      `${source} has no valid "sha256" field, so nothing pins its contents; only sets written by 'tandem layouts sample' or 'bump' can be used.`,
    );
  }
  const found = layoutSetHash(body);
  if (found !== body.sha256) {
    throw new LayoutSetError(
      `${source} does not match its hash: expected ${body.sha256} (recorded in the file), found ${found} (computed from its contents); it was changed after it was frozen — to change a set on purpose, run 'tandem layouts bump'.`,
      { expected: body.sha256, found },
    );
  }
  return body as LayoutSet;
}

/**
 * The next version of a (possibly hand-edited) set: structurally checked, version + 1, a
 * `previous` lineage pointing at the version and hash it came from, and a fresh hash.
 */
export function bumpLayoutSet(text: string, source: string): LayoutSet {
  const old = parseLayoutSet(text, source, { checkHash: false });
  if (old.sha256 === '') {
    throw new LayoutSetError(
      `${source} has no valid "sha256" field, so the version it came from cannot be recorded; bump starts from a set written by 'tandem layouts sample'.`,
    );
  }
  return pinLayoutSet({ ...old, version: old.version + 1, previous: { version: old.version, sha256: old.sha256 } });
}

/** The layout at index i, or a LayoutSetError naming the valid range. */
export function layoutAt(set: LayoutSet, index: number): Layout {
  if (!Number.isInteger(index) || index < 0 || index >= set.layouts.length) {
    throw new LayoutSetError(`Layout ${index} does not exist: this set has layouts 0 to ${set.layouts.length - 1}.`);
  }
  return set.layouts[index];
}

export type { Layout, LayoutFixture, LayoutObject };
