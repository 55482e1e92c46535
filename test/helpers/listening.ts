/**
 * The addresses the kernel says something listens on for a TCP port (from /proc/net/tcp and tcp6):
 * what a network scan would find, whatever the server believes it asked for.
 */
import { readFileSync } from 'node:fs';

function ipv4(hex: string): string {
  // /proc/net/tcp writes the address as a little-endian 32-bit word.
  return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
}

function ipv6(hex: string): string {
  if (/^0{32}$/.test(hex)) return '::';
  if (hex === '00000000000000000000000001000000') return '::1';
  if (hex.startsWith('0000000000000000FFFF0000')) return `::ffff:${ipv4(hex.slice(24))}`;
  return hex;
}

/** Every local address with a socket in LISTEN on `port`. */
export function listeningAddresses(port: number): string[] {
  const out: string[] = [];
  for (const [file, v6] of [
    ['/proc/net/tcp', false],
    ['/proc/net/tcp6', true],
  ] as const) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      const [addr, portHex] = local.split(':');
      if (state === '0A' && parseInt(portHex, 16) === port) out.push(v6 ? ipv6(addr) : ipv4(addr));
    }
  }
  return out;
}

/** Whether an address only this machine reaches. */
export function isLoopbackAddress(a: string): boolean {
  return /^127\./.test(a) || a === '::1' || /^::ffff:127\./.test(a);
}
