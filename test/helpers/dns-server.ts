/**
 * A tiny authoritative DNS server on 127.0.0.1 (UDP, node:dgram + dns-packet) for the webmaster proof tests: it
 * answers TXT questions from a table the test edits, NXDOMAIN for names it does not hold, and counts queries.
 * Resolvers are pointed at it with node:dns Resolver#setServers(['127.0.0.1:PORT']).
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

export interface TestDnsServer {
  readonly port: number;
  /** `127.0.0.1:PORT`, for setServers. */
  readonly server: string;
  /** Sets (or with null removes) the TXT values of a name. */
  setTxt(name: string, values: readonly string[] | null): void;
  /** Every question name received, lower case, in order. */
  readonly questions: string[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, readonly string[]>();
  const questions: string[] = [];
  const sock = createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const q = query.questions?.[0];
    if (!q) return;
    const name = q.name.toLowerCase().replace(/\.$/, '');
    questions.push(name);
    const values = txt.get(name);
    const answers: dnsPacket.Answer[] =
      q.type === 'TXT' && values
        ? values.map((v) => ({ type: 'TXT', name: q.name, ttl: 1, class: 'IN', data: v }) as dnsPacket.Answer)
        : [];
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (values ? 0 : 3), // rcode 3 = NXDOMAIN when the name is unknown
      questions: [q],
      answers,
    });
    sock.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  const port = (sock.address() as AddressInfo).port;
  return {
    port,
    server: `127.0.0.1:${port}`,
    questions,
    setTxt(name, values) {
      const n = name.toLowerCase().replace(/\.$/, '');
      if (values === null) txt.delete(n);
      else txt.set(n, values);
    },
    close: () => new Promise<void>((resolve) => sock.close(() => resolve())),
  };
}
