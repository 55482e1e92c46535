// The Electron main process's entry: sources are TypeScript, run through tsx's loader as the CLI
// does (bin/tandem.js), then the shell itself.
import { register } from 'tsx/esm/api';
register();
await import('./main.ts');
