// Entry of a sweep worker thread. Worker threads do not inherit the parent's module hooks, and
// `--import tsx` in a worker's execArgv is not honoured on every Node version we support, so the
// worker registers tsx itself (as bin/tandem.js does) and then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./sweep-worker.ts');
