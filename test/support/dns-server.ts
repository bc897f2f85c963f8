import { createSocket } from 'node:dgram';

/**
 * A tiny real DNS server over UDP (RFC 1035) for the white-label domain tests: it answers CNAME queries from a
 * table the test edits (`set(name, target)`), NXDOMAIN for names it does not know, and SERVFAIL for names marked
 * as failing. Only what the service's resolver asks is implemented: one question per query, class IN.
 */
export interface DnsServer {
  /** host:port, for NFSE_DNS_SERVER */
  address: string;
  set(name: string, answer: { cname: string } | 'nxdomain' | 'servfail'): void;
  /** the names asked so far, in order */
  queries: string[];
  close(): Promise<void>;
}

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([Buffer.byteLength(l)]), Buffer.from(l, 'ascii')])),
    Buffer.from([0]),
  ]);
}

/** The question's name and the offset just after it. */
function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  for (;;) {
    const length = msg[at];
    if (length === undefined) throw new Error('truncated name');
    if (length === 0) return { name: labels.join('.'), end: at + 1 };
    if (length >= 0xc0) throw new Error('compression in a question');
    labels.push(msg.toString('ascii', at + 1, at + 1 + length));
    at += 1 + length;
  }
}

export async function startDnsServer(): Promise<DnsServer> {
  const records = new Map<string, { cname: string } | 'nxdomain' | 'servfail'>();
  const queries: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (msg, peer) => {
    if (msg.length < 12) return;
    let question: { name: string; end: number };
    try {
      question = readName(msg, 12);
    } catch {
      return;
    }
    const questionEnd = question.end + 4; // QTYPE, QCLASS
    const qtype = msg.readUInt16BE(question.end);
    const name = question.name.toLowerCase();
    queries.push(name);
    const record = records.get(name) ?? 'nxdomain';
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // id
    const recursionDesired = msg[2]! & 0x01;
    const rcode = record === 'nxdomain' ? 3 : record === 'servfail' ? 2 : 0;
    header.writeUInt16BE(0x8000 | 0x0400 | (recursionDesired << 8) | 0x0080 | rcode, 2); // QR AA RD RA rcode
    header.writeUInt16BE(1, 4); // QDCOUNT
    const answers: Buffer[] = [];
    if (typeof record === 'object' && (qtype === 5 || qtype === 1 || qtype === 28 || qtype === 255)) {
      const rdata = encodeName(record.cname);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
      rr.writeUInt16BE(5, 2); // CNAME
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(60, 6); // TTL
      rr.writeUInt16BE(rdata.length, 10);
      answers.push(rr, rdata);
    }
    header.writeUInt16BE(answers.length / 2, 6); // ANCOUNT
    socket.send(Buffer.concat([header, msg.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    set: (name, answer) => void records.set(name.toLowerCase().replace(/\.$/, ''), answer),
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
