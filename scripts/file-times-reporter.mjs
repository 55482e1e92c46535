// A node:test reporter that writes one line per test file: its top-level tests' summed duration
// and its name, so run-tests.mjs can print the slowest files at the end of each tier (where CI's
// time goes is then in every CI log, not guessed).
export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      const file = event.data.file ?? '?';
      perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  for (const [file, ms] of perFile) yield `${(ms / 1000).toFixed(1)}\t${file}\n`;
}
