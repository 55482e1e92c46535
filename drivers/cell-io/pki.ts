/**
 * PKI folders for node-opcua: its own certificate and key, trusted and rejected peers. node-opcua
 * writes them under ~/.config unless given a folder, so every client and server here gets one
 * inside the station's data directory (or a test's temp directory): one folder per side, as
 * node-opcua asks — two managers on one folder would share one private key.
 */
import './opcua-logs.js';
import { join } from 'node:path';
import certificateManager from 'node-opcua-certificate-manager';

const { OPCUACertificateManager } = certificateManager;
export type CertificateManager = InstanceType<typeof OPCUACertificateManager>;

/** A certificate manager rooted at pkiDir/side; `acceptUnknown` trusts peers it has not seen (loopback/emulator only). */
export function certificateManagerIn(pkiDir: string, side: string, acceptUnknown: boolean): CertificateManager {
  return new OPCUACertificateManager({
    rootFolder: join(pkiDir, side),
    automaticallyAcceptUnknownCertificate: acceptUnknown,
    name: side,
  });
}
