/**
 * rclnodejs is optional: it needs a sourced ROS 2 install to build, which this station may not have.
 * It is loaded by dynamic import inside a function, never at module load, and its absence is said
 * once, plainly, while everything else keeps working.
 */

/** The slice of rclnodejs this bridge uses (typed here because its package may be absent). */
export interface RosNode {
  createPublisher(type: string, topic: string): { publish(msg: unknown): void };
  createSubscription(type: string, topic: string, callback: (msg: unknown) => void): unknown;
  createClient(
    type: string,
    service: string,
  ): { sendRequest(req: unknown, callback: (res: unknown) => void): void; isServiceServerAvailable?(): boolean };
  destroy?(): void;
}

export interface RosRuntime {
  createNode(name: string): RosNode;
  /** Runs the node's executor (rclnodejs.spin). */
  spin(node: RosNode): void;
  shutdown(): void;
}

export type RosAvailability =
  | { readonly available: true; readonly runtime: RosRuntime }
  | { readonly available: false; readonly reason: string };

let cached: Promise<RosAvailability> | undefined;
let said = false;

export const ROS_UNAVAILABLE_PREFIX = 'ROS 2 is not available on this machine (rclnodejs not installed)';

/**
 * Loads rclnodejs once. `importer` is for tests (it stands in for `import('rclnodejs')`);
 * `warn` receives the unavailability sentence exactly once per process.
 */
export function loadRos(
  options: { importer?: () => Promise<unknown>; warn?: (message: string) => void } = {},
): Promise<RosAvailability> {
  if (cached && !options.importer) return cached;
  const attempt = (async (): Promise<RosAvailability> => {
    const moduleName = 'rclnodejs';
    let mod: unknown;
    try {
      // A variable specifier keeps TypeScript and bundlers from resolving the optional package.
      mod = await (options.importer ? options.importer() : import(moduleName));
    } catch (e) {
      const reason = `${ROS_UNAVAILABLE_PREFIX}: ${(e as Error).message.split('\n')[0]}. The ROS 2 bridge (RosRig, JointState mirror) is off; everything else works. Install ROS 2 and 'npm install rclnodejs' in a shell with ROS 2 sourced to enable it.`;
      if (!said) {
        said = true;
        (options.warn ?? ((m: string) => process.stderr.write(`${m}\n`)))(reason);
      }
      return { available: false, reason };
    }
    const r = ((mod as { default?: unknown }).default ?? mod) as {
      init(): Promise<void>;
      createNode(name: string): RosNode;
      spin(node: RosNode): void;
      shutdown(): void;
    };
    await r.init();
    return {
      available: true,
      runtime: { createNode: (n) => r.createNode(n), spin: (n) => r.spin(n), shutdown: () => r.shutdown() },
    };
  })();
  if (!options.importer) cached = attempt;
  return attempt;
}

/** For tests: forget that the message was said. */
export function resetRosLoaderForTests(): void {
  cached = undefined;
  said = false;
}
