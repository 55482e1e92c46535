// Entry of an env-server worker thread: registers tsx (worker threads do not inherit the parent's
// module hooks, see sweep-worker-entry.mjs), then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./env-worker.ts');
