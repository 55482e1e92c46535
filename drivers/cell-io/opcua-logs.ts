/**
 * node-opcua prints its warnings with console.log, on stdout, where they would corrupt a
 * command's --json output: they go to stderr instead, one line each. Imported before
 * node-opcua-client / -server in every module here, because some warnings are printed while
 * those packages load.
 */
import { format } from 'node:util';
import debugPkg from 'node-opcua-debug';

const toStderr = (_context: unknown, ...args: unknown[]): void => {
  process.stderr.write(`node-opcua: ${format(...args)}\n`);
};
debugPkg.setWarningLogger(toStderr);
debugPkg.setErrorLogger(toStderr);
debugPkg.setTraceLogger(toStderr);
debugPkg.setDebugLogger(toStderr);
