/**
 * node-opcua prints its warnings with console.log, on stdout, where they would corrupt a
 * command's --json output: they go to stderr instead, one line each. Imported before
 * node-opcua-client / -server in every module here, because some warnings are printed while
 * those packages load.
 */
import { format } from 'node:util';
import debugPkg from 'node-opcua-debug';

/**
 * Its load-time notice that Node 20 needs --security-revert for RSA PKCS#1 v1.5 concerns only the
 * Basic128Rsa15 policy, which the cell I/O config does not offer: said to nobody.
 */
const IRRELEVANT = /NODE-OPCUA-W27|security-revert=CVE-2023-46809/;

const toStderr = (_context: unknown, ...args: unknown[]): void => {
  const text = format(...args);
  if (IRRELEVANT.test(text)) return;
  process.stderr.write(`node-opcua: ${text}\n`);
};
debugPkg.setWarningLogger(toStderr);
debugPkg.setErrorLogger(toStderr);
debugPkg.setTraceLogger(toStderr);
debugPkg.setDebugLogger(toStderr);
