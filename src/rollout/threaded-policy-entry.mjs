// Entry of a policy worker thread: worker threads do not inherit the parent's module hooks, so
// the worker registers tsx itself (as the sweep workers do) and then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./threaded-policy-worker.ts');
