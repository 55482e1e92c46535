/**
 * Layout sets in the store, keyed by their SHA-256: the store recomputes the hash over the
 * canonical JSON and refuses a mismatch, and reads each set's tiers once (rollouts take their
 * tier from the set, not from the caller).
 */
import canonicalize from 'canonicalize';
import type { LayoutSet } from '../layouts/layout-set.js';
import { nowIso, SHA256_HEX, sha256Hex, type Row } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { LayoutSetInput, LayoutSetRecord } from './records.js';

interface LayoutSetFacts {
  readonly task: string;
  readonly version: number;
  readonly seed: number;
  readonly tiers: readonly number[];
}

/** RFC 8785 canonical JSON of a pinned set without its sha256: the bytes its hash is taken over. */
function canonicalBody(set: LayoutSet): string {
  const { sha256: _id, ...body } = set;
  const text = canonicalize(body);
  if (text === undefined) throw new RangeError('the layout set cannot be written as JSON');
  return text;
}

function layoutSetRecord(r: Row): LayoutSetRecord {
  return {
    sha256: String(r.sha256),
    task: String(r.task),
    version: Number(r.version),
    seed: Number(r.seed),
    layoutCount: Number(r.layout_count),
    canonicalJson: String(r.canonical_json),
    importedAt: String(r.imported_at),
  };
}

export class LayoutSets {
  private readonly tiersBySet = new Map<string, readonly number[]>();

  constructor(private readonly c: StoreConnection) {}

  /**
   * Stores a layout set by its hash. Idempotent: putting the same set again changes nothing.
   * Takes the pinned set itself (its canonical JSON is computed here) or its canonical JSON and hash.
   */
  putLayoutSet(set: LayoutSetInput | LayoutSet): { record: LayoutSetRecord; inserted: boolean } {
    const input = 'canonicalJson' in set ? set : { sha256: set.sha256, canonicalJson: canonicalBody(set) };
    if (!SHA256_HEX.test(input.sha256)) throw this.c.error(`'${input.sha256}' is not a hex SHA-256 layout-set id.`);
    const found = sha256Hex(input.canonicalJson);
    if (found !== input.sha256)
      throw this.c.error(`Layout set refused: its JSON hashes to ${found}, not the claimed ${input.sha256}.`);
    // A pinned set is read as it is; only JSON from outside needs parsing.
    const facts = this.facts('canonicalJson' in set ? this.parse(set.canonicalJson, set.sha256) : set, input.sha256);
    const importedAt = input.importedAt ?? nowIso();
    const inserted = this.c.write(
      () =>
        this.c
          .sql(
            'INSERT OR IGNORE INTO layout_sets (sha256, task, version, seed, layout_count, canonical_json, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          )
          .run(input.sha256, facts.task, facts.version, facts.seed, facts.tiers.length, input.canonicalJson, importedAt)
          .changes === 1,
    );
    this.tiersBySet.set(input.sha256, facts.tiers);
    if (inserted) {
      const { task, version, seed } = facts;
      return {
        record: {
          sha256: input.sha256,
          task,
          version,
          seed,
          layoutCount: facts.tiers.length,
          canonicalJson: input.canonicalJson,
          importedAt,
        },
        inserted,
      };
    }
    const record = this.getLayoutSet(input.sha256);
    if (!record) throw this.c.error(`Layout set ${input.sha256} vanished right after it was stored.`);
    return { record, inserted };
  }

  /** The stored set as the layouts room knows it (body plus sha256), ready for a sim sweep. */
  loadLayoutSet(sha256: string): LayoutSet | undefined {
    const record = this.getLayoutSet(sha256);
    return record ? ({ ...(JSON.parse(record.canonicalJson) as object), sha256 } as LayoutSet) : undefined;
  }

  getLayoutSet(sha256: string): LayoutSetRecord | undefined {
    const r = this.c.guard(
      () => this.c.sql('SELECT * FROM layout_sets WHERE sha256 = ?').get(sha256) as Row | undefined,
    );
    return r ? layoutSetRecord(r) : undefined;
  }

  listLayoutSets(filter: { task?: string } = {}): LayoutSetRecord[] {
    const rows = this.c.guard(() =>
      filter.task === undefined
        ? (this.c.sql('SELECT * FROM layout_sets ORDER BY imported_at, sha256').all() as Row[])
        : (this.c
            .sql('SELECT * FROM layout_sets WHERE task = ? ORDER BY imported_at, sha256')
            .all(filter.task) as Row[]),
    );
    return rows.map(layoutSetRecord);
  }

  /** Each layout's tier, by layout index; undefined when the set is not in the store. */
  layoutTiers(sha256: string): readonly number[] | undefined {
    const cached = this.tiersBySet.get(sha256);
    if (cached) return cached;
    const set = this.getLayoutSet(sha256);
    if (!set) return undefined;
    const tiers = this.facts(this.parse(set.canonicalJson, sha256), sha256).tiers;
    this.tiersBySet.set(sha256, tiers);
    return tiers;
  }

  private parse(json: string, sha256: string): unknown {
    try {
      return JSON.parse(json);
    } catch {
      throw this.c.error(`Layout set ${sha256}: its canonical JSON does not parse.`);
    }
  }

  private facts(doc: unknown, sha256: string): LayoutSetFacts {
    const d = doc as { task?: unknown; version?: unknown; seed?: unknown; layouts?: unknown };
    if (
      typeof d !== 'object' ||
      d === null ||
      typeof d.task !== 'string' ||
      !Number.isSafeInteger(d.version) ||
      !Number.isSafeInteger(d.seed) ||
      !Array.isArray(d.layouts)
    ) {
      throw this.c.error(`Layout set ${sha256} lacks a task, a whole-number version and seed, or a layouts list.`);
    }
    const tiers = d.layouts.map((l: unknown, i: number) => {
      const tier = (l as { tier?: unknown } | null)?.tier;
      if (!Number.isSafeInteger(tier))
        throw this.c.error(`Layout set ${sha256}: layout ${i} has no whole-number tier.`);
      return tier as number;
    });
    return { task: d.task, version: d.version as number, seed: d.seed as number, tiers };
  }
}
