#!/usr/bin/env node
// First step of `npm test`: the Debian packages the tests drive for real (socat ptys, headless
// chromium, ffmpeg cameras, a redis-server for distributed sweeps). Without them a newcomer got
// a score of failing tests and stack traces; instead, one line with the command that fixes it.
import { accessSync, constants, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';

/** Debian package → the program the tests run from it. */
const NEEDED = [
  ['socat', 'socat'],
  ['chromium', 'chromium'],
  ['ffmpeg', 'ffmpeg'],
  ['redis-server', 'redis-server'],
];

function onPath(program) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const missing = NEEDED.filter(([pkg, program]) => {
  // The sim cameras honour TANDEM_CHROMIUM; a chromium there counts.
  if (pkg === 'chromium' && process.env.TANDEM_CHROMIUM) return !executable(process.env.TANDEM_CHROMIUM);
  return !onPath(program);
}).map(([pkg]) => pkg);

// The env-server test runs the Python vector-env client (clients/python) on Debian's python3.
const python = process.env.TANDEM_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
if (spawnSync(python, ['-c', 'import websockets, msgpack'], { stdio: 'ignore' }).status !== 0)
  missing.push('python3-websockets', 'python3-msgpack');

if (missing.length > 0) {
  console.error(
    `npm test needs the Debian package${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (not found on PATH); install with: sudo apt-get install --no-install-recommends ${missing.join(' ')}`,
  );
  process.exit(1);
}
