/** Calibrations in the store, keyed by their SHA-256: projector homography, camera models, sim parameters; each versioned. */
import { nowIso, SHA256_HEX, sha256Hex, type Row } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { CalibrationInput, CalibrationRecord } from './records.js';

export class Calibrations {
  constructor(private readonly c: StoreConnection) {}

  /** Stores a calibration by its hash. Idempotent. */
  putCalibration(input: CalibrationInput): { record: CalibrationRecord; inserted: boolean } {
    if (!SHA256_HEX.test(input.sha256)) throw this.c.error(`'${input.sha256}' is not a hex SHA-256 calibration id.`);
    const found = sha256Hex(input.canonicalJson);
    if (found !== input.sha256)
      throw this.c.error(`Calibration refused: its JSON hashes to ${found}, not the claimed ${input.sha256}.`);
    if (!Number.isSafeInteger(input.version))
      throw this.c.error(`Calibration ${input.sha256}: version must be a whole number.`);
    const inserted = this.c.write(
      () =>
        this.c
          .sql(
            'INSERT OR IGNORE INTO calibrations (sha256, kind, version, canonical_json, created_at) VALUES (?, ?, ?, ?, ?)',
          )
          .run(input.sha256, input.kind, input.version, input.canonicalJson, input.createdAt ?? nowIso()).changes === 1,
    );
    const record = this.getCalibration(input.sha256);
    if (!record) throw this.c.error(`Calibration ${input.sha256} vanished right after it was stored.`);
    return { record, inserted };
  }

  getCalibration(sha256: string): CalibrationRecord | undefined {
    const r = this.c.guard(
      () => this.c.sql('SELECT * FROM calibrations WHERE sha256 = ?').get(sha256) as Row | undefined,
    );
    return r
      ? {
          sha256: String(r.sha256),
          kind: String(r.kind),
          version: Number(r.version),
          canonicalJson: String(r.canonical_json),
          createdAt: String(r.created_at),
        }
      : undefined;
  }

  /** Per kind: how many calibrations the store holds and its newest (by version, then time). */
  calibrationKinds(): { kind: string; count: number; newest: Omit<CalibrationRecord, 'canonicalJson'> }[] {
    const rows = this.c.guard(
      () => this.c.sql('SELECT kind, COUNT(*) AS n FROM calibrations GROUP BY kind ORDER BY kind').all() as Row[],
    );
    return rows.map((r) => {
      const { canonicalJson: _json, ...newest } = this.latestCalibration(String(r.kind))!;
      return { kind: String(r.kind), count: Number(r.n), newest };
    });
  }

  /** The newest calibration of a kind (by version, then time), e.g. the projector homography in force. */
  latestCalibration(kind: string): CalibrationRecord | undefined {
    const r = this.c.guard(
      () =>
        this.c
          .sql('SELECT sha256 FROM calibrations WHERE kind = ? ORDER BY version DESC, created_at DESC LIMIT 1')
          .get(kind) as Row | undefined,
    );
    return r ? this.getCalibration(String(r.sha256)) : undefined;
  }
}
