#!/usr/bin/env node
// The tandem CLI. Sources are TypeScript, run through tsx's loader registered for this process;
// sim sweep workers register it themselves (src/sim/sweep-worker-entry.mjs).
import { register } from 'tsx/esm/api';
register();
await import('../src/app/cli.ts');
