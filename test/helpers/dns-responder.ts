import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

export interface DnsResponder {
  /** `127.0.0.1:PORT`, for DNS_SERVERS. */
  server: string;
  /** TXT records by name (lower case, no trailing dot). */
  txt: Map<string, string[]>;
  /** Questions asked, in order. */
  questions: string[];
  close(): Promise<void>;
}

/**
 * A small authoritative DNS server on UDP for the tests' DNS_SERVERS: answers TXT questions from `txt`, and
 * NXDOMAIN for every other name, so domain verification runs against a real resolver round trip.
 */
export async function startDnsResponder(): Promise<DnsResponder> {
  const socket = dgram.createSocket('udp4');
  const txt = new Map<string, string[]>();
  const questions: string[] = [];
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    questions.push(name);
    const values = question.type === 'TXT' ? txt.get(name) : undefined;
    const answer = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (values ? 0 : 3),
      questions: [question],
      answers: (values ?? []).map((value) => ({ type: 'TXT' as const, class: 'IN' as const, name: question.name, ttl: 1, data: value })),
    });
    socket.send(answer, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    txt,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
