// Preloaded (`--import`) into every test file's process by run-tests.mjs: at exit it appends the
// file's CPU time — its own plus every process it started and waited for (CLI children, chromium,
// redis-server, ffmpeg: /proc's cutime/cstime) — to TANDEM_TEST_CPU_FILE. On 2 cores the suite's
// length is its CPU time over two, so this, not a file's wall time beside busy neighbours, says
// which files cost the suite its minutes. Linux only (/proc); elsewhere it writes nothing.
import { appendFileSync, readFileSync } from 'node:fs';

const out = process.env.TANDEM_TEST_CPU_FILE;
const file = process.argv[1] ?? '';
// A file runs either as `node --test`'s child or as a process of its own that run-tests.mjs names.
const testFileProcess =
  process.env.NODE_TEST_CONTEXT?.startsWith('child') || process.env.TANDEM_TEST_FILE_PROCESS === file;
if (out && testFileProcess && /\.test\.[jt]s$/.test(file)) {
  process.on('exit', () => {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      // Fields after the command's closing parenthesis: utime, stime, cutime, cstime are the 12th–15th.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      // USER_HZ is 100 on every Linux ABI node runs on.
      if (Number.isFinite(ticks)) appendFileSync(out, `${(ticks / 100).toFixed(1)}\t${file}\n`);
    } catch {
      // no /proc: nothing to report
    }
  });
}
