/**
 * `tandem layouts …`: sample, verify, show and bump hash-pinned layout sets. The pure work lives
 * in src/layouts; this file reads and writes the files and turns bad input into one sentence.
 */
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import {
  intOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import {
  bumpLayoutSet,
  layoutAt,
  parseLayoutSet,
  sampleLayoutSet,
  serializeLayoutSet,
  type LayoutSet,
} from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import { TIER_MAX, TIER_MIN } from '../../layouts/sample.js';
import { layoutTopViewSvg } from '../../layouts/top-view.js';
import { layoutProblems } from '../../layouts/geometry-check.js';
import { parseRandomizationSpec, RandomizationSpecError, type LayoutFocus } from '../../sim/randomization.js';
import { getTask } from '../../tasks/registry.js';
import { TaskInputError } from '../../tasks/errors.js';

/** Runs fn, turning the pure rooms' input errors into UserErrors (one sentence, no stack). */
export function asUserError<T>(fn: () => T, exitCode = 2): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof LayoutSetError || e instanceof TaskInputError) throw new UserError(e.message, exitCode);
    throw e;
  }
}

/** How a path is shown in messages: as the user typed it, relative to where they are. */
function shown(io: CliIo, path: string): string {
  const rel = relative(io.cwd, path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** Reads a text file the user named, or a UserError saying why not. */
export function readUserFile(io: Pick<CliIo, 'cwd'>, file: string, what: string): { path: string; text: string } {
  const path = resolve(io.cwd, file);
  try {
    if (statSync(path).isDirectory()) throw new UserError(`${file} is a folder, not a ${what} file.`);
    return { path, text: readFileSync(path, 'utf8') };
  } catch (e) {
    if (e instanceof UserError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`There is no ${what} file at ${file}.`);
    if (code === 'EACCES') throw new UserError(`${file} cannot be read (permission denied).`);
    throw e;
  }
}

/** Reads and verifies a layout set file; a mismatch or malformed file is a UserError. */
export function readLayoutSetFile(io: CliIo, file: string, exitCode = 2): { path: string; set: LayoutSet } {
  const { path, text } = readUserFile(io, file, 'layout set');
  return { path, set: asUserError(() => parseLayoutSet(text, shown(io, path)), exitCode) };
}

/** Writes a file whole or not at all (temp file + rename), refusing to replace one unless asked. */
export function writeNewFile(io: CliIo, file: string, data: string | Buffer, force: boolean): string {
  const path = resolve(io.cwd, file);
  if (existsSync(path) && !force)
    throw new UserError(`${file} already exists; choose another name or add --force to replace it.`);
  if (!existsSync(dirname(path))) throw new UserError(`The folder for ${file} does not exist; create it first.`);
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
  return path;
}

function parseTiers(v: unknown): number[] {
  if (v === undefined) return [1, 2, 3, 4, 5];
  const items = String(v)
    .split(',')
    .map((s) => s.trim());
  const tiers = items.map((s) => {
    const t = /^\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isInteger(t) || t < TIER_MIN || t > TIER_MAX)
      throw new UserError(
        `--tiers: tier '${s}' is out of range; tiers run from ${TIER_MIN} to ${TIER_MAX} (e.g. --tiers 1,2,3).`,
      );
    return t;
  });
  if (new Set(tiers).size !== tiers.length) throw new UserError(`--tiers lists a tier twice: ${String(v)}.`);
  return tiers;
}

const outputOf = (args: ParsedCommandArgs): string => {
  const o = args.values.output;
  if (typeof o !== 'string' || o.length === 0)
    throw new UserError('Missing -o FILE (where to write). Run with --help to see the usage.');
  return o;
};

/** The layouts section of a randomization spec file; refuses a spec without one. */
function layoutFocusOf(io: CliIo, file: string): LayoutFocus {
  const { path, text } = readUserFile(io, file, 'randomization spec');
  let parsed;
  try {
    parsed = parseRandomizationSpec(text, shown(io, path));
  } catch (e) {
    if (e instanceof RandomizationSpecError) throw new UserError(e.message);
    throw e;
  }
  const focus = parsed.spec.layouts;
  if (!focus)
    throw new UserError(
      `${file} has no "layouts" section, so it says nothing about which layouts to sample; its physics and visual ranges apply to sweeps (tandem sim sweep --randomize).`,
    );
  return focus;
}

const sample: CliCommand = {
  path: ['layouts', 'sample'],
  summary: 'sample a hash-pinned layout set for a task',
  help: `Usage: tandem layouts sample --task TASK --per-tier N --seed S [--tiers 1,2,3] [--randomize SPEC] -o FILE [--force] [--json]

Draws N layouts per tier (objects in the workspace, apart, within reach of an arm), freezes
them with a SHA-256 and writes the set as JSON. The same task, tiers, N and seed give a
byte-identical file on any machine.

  --task TASK      bottles-in-the-bin, mug-flipping or sort-from-tote
  --per-tier N     layouts per tier (1–1000)
  --seed S         whole number; record it to reproduce the set
  --tiers LIST     comma-separated tiers from 1 to 5 (default 1,2,3,4,5)
  -o, --output F   file to write; an existing file is kept unless --force
  --force          replace an existing output file
  --randomize SPEC a randomization spec with a "layouts" section (as tandem diagnose
                   --propose-randomization writes): its tiers (unless --tiers) and only layouts
                   with its crowded / lying objects`,
  options: {
    task: { type: 'string' },
    'per-tier': { type: 'string' },
    seed: { type: 'string' },
    tiers: { type: 'string' },
    output: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    randomize: { type: 'string' },
  },
  async run(args, io) {
    const task = requireString(args, 'task');
    const perTier = intOption(args, 'per-tier', undefined, 1, 1000);
    const seed = intOption(args, 'seed', undefined, 0, Number.MAX_SAFE_INTEGER);
    const focus = typeof args.values.randomize === 'string' ? layoutFocusOf(io, args.values.randomize) : undefined;
    const tiers = focus && args.values.tiers === undefined ? [...focus.tiers] : parseTiers(args.values.tiers);
    const out = outputOf(args);
    if (existsSync(resolve(io.cwd, out)) && args.values.force !== true)
      throw new UserError(`${out} already exists; choose another name or add --force to replace it.`);
    const set = asUserError(() => sampleLayoutSet({ task, tiers, perTier, seed, ...(focus ? { focus } : {}) }));
    const path = writeNewFile(io, out, serializeLayoutSet(set), args.values.force === true);
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ file: path, task: set.task, version: set.version, seed, tiers, layouts: set.layouts.length, sha256: set.sha256 })}\n`,
      );
    } else {
      io.out(
        `Wrote ${set.layouts.length} layouts of ${set.task} (tiers ${tiers.join(', ')}, seed ${seed}) to ${out}\nsha256 ${set.sha256}\n`,
      );
    }
  },
};

const verify: CliCommand = {
  path: ['layouts', 'verify'],
  summary: 'check a layout set against its recorded SHA-256',
  help: `Usage: tandem layouts verify FILE [--json]

Recomputes the hash of the set's canonical JSON (RFC 8785) and compares it with the one
recorded in the file. Exit 0 when they match; exit 1 with the reason when they do not or
the file is not a valid layout set.

  --json   print {"ok", "file", "task", "version", "layouts", "sha256"} or {"ok": false, "error", …}`,
  options: {},
  positionals: [1, 1],
  async run(args, io) {
    const file = args.positionals[0];
    const { path, text } = readUserFile(io, file, 'layout set');
    try {
      const set = parseLayoutSet(text, shown(io, path));
      if (args.values.json) {
        io.out(
          `${JSON.stringify({ ok: true, file: path, task: set.task, version: set.version, tiers: set.tiers, layouts: set.layouts.length, sha256: set.sha256 })}\n`,
        );
      } else {
        io.out(
          `${file}: OK — ${set.task} v${set.version}, ${set.layouts.length} layouts (tiers ${set.tiers.join(', ')})\nsha256 ${set.sha256}\n`,
        );
      }
      return 0;
    } catch (e) {
      if (!(e instanceof LayoutSetError || e instanceof TaskInputError)) throw e;
      if (args.values.json) {
        const mismatch = e instanceof LayoutSetError ? e.hashMismatch : undefined;
        io.out(
          `${JSON.stringify({ ok: false, file: path, error: e.message, ...(mismatch ? { expected: mismatch.expected, found: mismatch.found } : {}) })}\n`,
        );
        return 1;
      }
      throw new UserError(e.message, 1);
    }
  },
};

const show: CliCommand = {
  path: ['layouts', 'show'],
  summary: 'draw one layout from above as a PNG',
  help: `Usage: tandem layouts show FILE --layout I -o out.png [--size PX]

Draws layout I of the set seen from above with the robot at the bottom: table, arm bases and
reach, workspace, fixtures with their slots, objects with ids and posture (filled disc =
upright, disc with a cross = upside down, bar with an arrow = lying, arrow towards its top),
and a caption with the tier and the set's hash prefix.

  --layout I       layout index (0-based, as in the file)
  -o, --output F   PNG to write; an existing file is kept unless --force
  --size PX        width and height in pixels (200–4000, default 1000)
  --force          replace an existing output file`,
  options: {
    layout: { type: 'string' },
    output: { type: 'string', short: 'o' },
    size: { type: 'string' },
    force: { type: 'boolean' },
  },
  positionals: [1, 1],
  async run(args, io) {
    const { set } = readLayoutSetFile(io, args.positionals[0]);
    const index = intOption(args, 'layout', undefined, 0, Number.MAX_SAFE_INTEGER);
    const size = intOption(args, 'size', 1000, 200, 4000);
    const out = outputOf(args);
    const layout = asUserError(() => layoutAt(set, index));
    const svg = layoutTopViewSvg(set, index, size);
    const { default: sharp } = await import('sharp');
    const png = await sharp(Buffer.from(svg)).png().toBuffer();
    writeNewFile(io, out, png, args.values.force === true);
    if (args.values.json)
      io.out(
        `${JSON.stringify({ file: resolve(io.cwd, out), layout: index, tier: layout.tier, sizePx: size, sha256: set.sha256 })}\n`,
      );
    else
      io.out(
        `Drew layout ${index} (tier ${layout.tier}, ${layout.objects.length} objects) to ${out}, ${size}×${size} px.\n`,
      );
  },
};

const bump: CliCommand = {
  path: ['layouts', 'bump'],
  summary: 'freeze an edited layout set as its next version',
  help: `Usage: tandem layouts bump FILE -o NEW [--force] [--json]

Takes a layout set — typically one edited by hand, so its hash no longer matches — checks
that it is a structurally valid set, and writes it as version + 1 with a fresh hash and a
"previous": {"version", "sha256"} field pointing at the set it came from. Results recorded
on the old hash keep pointing at it. A bump never overwrites its input. Objects moved out
of reach, off the workspace or onto each other are reported as warnings.

  -o, --output F   file for the new version
  --force          replace an existing output file (never the input)`,
  options: { output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
  positionals: [1, 1],
  async run(args, io) {
    const file = args.positionals[0];
    const out = outputOf(args);
    const { path, text } = readUserFile(io, file, 'layout set');
    if (resolve(io.cwd, out) === path)
      throw new UserError(`A bump never overwrites its input: write the new version to another file than ${file}.`);
    const next = asUserError(() => bumpLayoutSet(text, shown(io, path)));
    const written = writeNewFile(io, out, serializeLayoutSet(next), args.values.force === true);
    // Placement problems do not stop a bump (the edit may be deliberate) but the operator hears of them.
    const task = getTask(next.task);
    const problems = next.layouts.flatMap((l) => layoutProblems(task, l));
    for (const p of problems) io.err(`warning: ${p}\n`);
    if (args.values.json) {
      io.out(
        `${JSON.stringify({ file: written, task: next.task, version: next.version, previous: next.previous, sha256: next.sha256, warnings: problems })}\n`,
      );
    } else {
      io.out(
        `Wrote ${next.task} v${next.version} to ${out} (from v${next.previous?.version}, sha256 ${next.previous?.sha256.slice(0, 12)}…)\nsha256 ${next.sha256}\n`,
      );
    }
  },
};

export const commands: CliCommand[] = [sample, verify, show, bump];
