import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, type CliIo } from './command.js';
import { resolveDataDir } from './data-dir.js';
import { openStore, StoreError, type Store } from '../store/store.js';

/** The store's file name inside the station's data directory. */
export const STORE_FILE_NAME = 'tandem.sqlite';

/** Where the store lives for this data directory. */
export function storePath(dataDir: string): string {
  return join(dataDir, STORE_FILE_NAME);
}

/**
 * Opens the station's store at <dataDir>/tandem.sqlite, creating the folder and the database
 * on first use. Problems (a damaged file, a newer schema, no permission) become one UserError
 * sentence naming the file.
 */
export function openStationStore(dataDir: string): Store {
  try {
    // The operator's results, episodes and uploaded models: this user's only (0700). A folder that
    // exists already is left as it is: it may be one the operator chose and shares on purpose.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new UserError(
      `Cannot create the data folder ${dataDir}: ${(e as Error).message}. Pass --data DIR or set TANDEM_DATA to a writable folder.`,
    );
  }
  try {
    return openStore(storePath(dataDir));
  } catch (e) {
    if (e instanceof StoreError) throw new UserError(e.message);
    throw e;
  }
}

/** The store for a CLI command: `--data DIR`, else TANDEM_DATA, else the per-user default. */
export function openCommandStore(values: { readonly data?: unknown }, io: Pick<CliIo, 'env' | 'cwd'>): Store {
  const flag = typeof values.data === 'string' ? values.data : undefined;
  return openStationStore(resolveDataDir(flag, io.env, io.cwd));
}

/** Runs `fn` with the command's store open, closing it afterwards; store errors become UserErrors. */
export async function withCommandStore<T>(
  values: { readonly data?: unknown },
  io: Pick<CliIo, 'env' | 'cwd'>,
  fn: (store: Store) => T | Promise<T>,
): Promise<T> {
  const store = openCommandStore(values, io);
  try {
    return await fn(store);
  } catch (e) {
    if (e instanceof StoreError) throw new UserError(e.message);
    throw e;
  } finally {
    store.close();
  }
}
