// Entry of the YAM's rig thread: worker threads do not inherit the parent's module hooks, so the
// worker registers tsx itself (as the sweep and policy workers do) and then loads the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./rig-thread-worker.ts');
