// Entry of a sysid replay worker thread: registers tsx (worker threads do not inherit the parent's
// module hooks, see src/sim/sweep-worker-entry.mjs), then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./replay-worker.ts');
