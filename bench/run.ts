/**
 * Runs the benchmarks: every bench/*.bench.ts, or those whose name contains an argument.
 *   npm run bench            all
 *   npm run bench -- sim     only bench/sim*.bench.ts
 * Each benchmark prints its own same-run baseline and ratios; this only sequences them.
 */
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const filters = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
  .sort();
if (benches.length === 0) {
  console.error(
    `no benchmark matches ${filters.join(' ') || '*'}; available: ${readdirSync(dir)
      .filter((f) => f.endsWith('.bench.ts'))
      .join(', ')}`,
  );
  process.exit(2);
}
let failed = 0;
for (const b of benches) {
  console.log(`\n=== ${b} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${b}`], { stdio: 'inherit' });
  if (r.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
