#!/usr/bin/env node
// The tandem CLI. Sources are TypeScript run through tsx's loader, registered for this
// process and (via TANDEM_TSX_IMPORT) handed to worker threads and child processes.
import { register } from 'tsx/esm/api';
register();
await import('../src/app/cli.ts');
