import type { ParseArgsConfig } from 'node:util';

/** An error the operator can act on: printed as its message alone, exit code 2, no stack. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Aborted on Ctrl-C; long commands stop cleanly and keep what finished. */
  readonly signal: AbortSignal;
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface ParsedCommandArgs {
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly positionals: string[];
}

export interface CliCommand {
  /** Words after `tandem`, e.g. ['layouts', 'sample']. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Usage line(s) and option descriptions shown by --help. */
  readonly help: string;
  readonly options: OptionSpec;
  /** Allowed number of positional arguments [min, max]. */
  readonly positionals?: readonly [number, number];
  run(args: ParsedCommandArgs, io: CliIo): Promise<number | void>;
}

/** Reads a string option or throws a UserError naming it. */
export function requireString(args: ParsedCommandArgs, name: string): string {
  const v = args.values[name];
  if (typeof v !== 'string' || v.length === 0)
    throw new UserError(`Missing --${name}. Run with --help to see the usage.`);
  return v;
}

/** Parses an integer option within [min, max], or throws a UserError naming it. */
export function intOption(
  args: ParsedCommandArgs,
  name: string,
  fallback: number | undefined,
  min: number,
  max: number,
): number {
  const v = args.values[name];
  if (v === undefined) {
    if (fallback === undefined) throw new UserError(`Missing --${name}. Run with --help to see the usage.`);
    return fallback;
  }
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UserError(`--${name} must be a whole number from ${min} to ${max}, not '${String(v)}'.`);
  }
  return n;
}

/** Parses a number option within [min, max], or throws a UserError naming it. */
export function numberOption(
  args: ParsedCommandArgs,
  name: string,
  fallback: number | undefined,
  min: number,
  max: number,
): number {
  const v = args.values[name];
  if (v === undefined) {
    if (fallback === undefined) throw new UserError(`Missing --${name}. Run with --help to see the usage.`);
    return fallback;
  }
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < min || n > max)
    throw new UserError(`--${name} must be a number from ${min} to ${max}, not '${String(v)}'.`);
  return n;
}
