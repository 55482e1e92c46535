/** Policies in the store: one row per (spec, checkpoint hash); renaming keeps the id and its results. */
import { nowIso, type Row, SHA256_HEX, strOrNull } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { PolicyInput, PolicyRecord } from './records.js';

function policyRecord(r: Row): PolicyRecord {
  return {
    id: Number(r.id),
    spec: String(r.spec),
    name: String(r.name),
    checkpointSha256: strOrNull(r.checkpoint_sha256),
    createdAt: String(r.created_at),
  };
}

export class Policies {
  constructor(private readonly c: StoreConnection) {}

  /** Returns the policy with this spec and checkpoint, creating it (or updating its display name). */
  upsertPolicy(input: PolicyInput): PolicyRecord {
    if (!input.spec.trim()) throw this.c.error('A policy needs a spec saying how to load it.');
    if (!input.name.trim()) throw this.c.error(`Policy '${input.spec}' needs a name.`);
    const checkpoint = input.checkpointSha256 ?? null;
    if (checkpoint !== null && !SHA256_HEX.test(checkpoint))
      throw this.c.error(`Policy '${input.name}': '${checkpoint}' is not a hex SHA-256 checkpoint hash.`);
    return this.c.write(() => {
      const existing = this.c
        .sql("SELECT * FROM policies WHERE spec = ? AND ifnull(checkpoint_sha256, '') = ?")
        .get(input.spec, checkpoint ?? '') as Row | undefined;
      if (existing) {
        if (existing.name !== input.name)
          this.c.sql('UPDATE policies SET name = ? WHERE id = ?').run(input.name, existing.id);
        return policyRecord({ ...existing, name: input.name });
      }
      const createdAt = nowIso();
      const r = this.c
        .sql('INSERT INTO policies (spec, name, checkpoint_sha256, created_at) VALUES (?, ?, ?, ?)')
        .run(input.spec, input.name, checkpoint, createdAt);
      return {
        id: Number(r.lastInsertRowid),
        spec: input.spec,
        name: input.name,
        checkpointSha256: checkpoint,
        createdAt,
      };
    });
  }

  getPolicy(id: number): PolicyRecord | undefined {
    const r = this.c.guard(() => this.c.sql('SELECT * FROM policies WHERE id = ?').get(id) as Row | undefined);
    return r ? policyRecord(r) : undefined;
  }

  listPolicies(): PolicyRecord[] {
    return this.c.guard(() => (this.c.sql('SELECT * FROM policies ORDER BY id').all() as Row[]).map(policyRecord));
  }
}
