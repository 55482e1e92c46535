// Small, real inputs for store tests: a layout set and a calibration with their true hashes.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A bottles-in-the-bin-shaped layout set with the given tiers, canonical JSON and hash. */
export function layoutSetFixture(tiers: readonly number[], seed = 7): { sha256: string; canonicalJson: string } {
  const set = {
    format: 'tandem.layout-set/1',
    task: 'bottles-in-the-bin',
    version: 1,
    seed,
    tiers: [...new Set(tiers)].sort(),
    layouts: tiers.map((tier, index) => ({
      index,
      tier,
      fixtures: [{ id: 'bin', kind: 'bin', pose: { xM: 0.1, yM: 0.2, yawRad: 0 } }],
      objects: [
        { id: 'bottle-1', kind: 'bottle-500ml', pose: { xM: -0.1 * index, yM: 0, yawRad: 0.5 }, posture: 'upright' },
      ],
    })),
  };
  const canonicalJson = canonicalize(set) as string;
  return { sha256: sha256Hex(canonicalJson), canonicalJson };
}

export function calibrationFixture(
  kind: string,
  version: number,
  body: object,
): { sha256: string; kind: string; version: number; canonicalJson: string } {
  const canonicalJson = canonicalize(body) as string;
  return { sha256: sha256Hex(canonicalJson), kind, version, canonicalJson };
}
