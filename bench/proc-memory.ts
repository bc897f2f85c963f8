/**
 * What a process's resident memory is made of, from /proc/<pid>/smaps (Linux): its mappings grouped by what they
 * hold, counting the pages actually resident (process.memoryUsage() counts WebAssembly memories and other external
 * memory at their size, touched or not).
 *
 * - WebAssembly memories: the accessible part at the start of a V8 WebAssembly reservation, an anonymous read-write
 *   mapping followed directly by the reservation's inaccessible rest (several GB of `---p`).
 * - malloc: glibc's main heap (`[heap]`) and its thread arenas (anonymous mappings that start on a 64 MB boundary and
 *   fill it with their reserved rest).
 * - files: mapped files (the node binary, shared libraries).
 * - other anonymous: V8's heap pages and compiled code, thread stacks, large buffers mmapped by malloc.
 */
import { readFileSync } from 'node:fs';

export interface ResidentBreakdown {
  total: number;
  wasm: number;
  malloc: number;
  files: number;
  otherAnonymous: number;
}

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  name: string;
  rssKb: number;
}

const GB = 2n ** 30n;
const ARENA = 64n * 2n ** 20n;

function mappings(pid: number): Mapping[] {
  const list: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      list.push({
        start: BigInt(`0x${header[1]}`),
        end: BigInt(`0x${header[2]}`),
        perms: header[3]!,
        name: header[4]!.trim(),
        rssKb: 0,
      });
    } else if (line.startsWith('Rss:') && list.length > 0) {
      list[list.length - 1]!.rssKb = Number(line.split(/\s+/)[1]);
    }
  }
  return list;
}

/** The resident memory of `pid` by kind, in bytes; null when the process is gone. */
export function residentBreakdown(pid: number): ResidentBreakdown | null {
  let list: Mapping[];
  try {
    list = mappings(pid);
  } catch {
    return null;
  }
  const out: ResidentBreakdown = { total: 0, wasm: 0, malloc: 0, files: 0, otherAnonymous: 0 };
  list.forEach((m, i) => {
    const bytes = m.rssKb * 1024;
    out.total += bytes;
    const next = list[i + 1];
    const reservedAfter = next && next.start === m.end && next.perms.startsWith('---') && next.name === '';
    if (m.name === '[heap]') out.malloc += bytes;
    else if (m.name.startsWith('/')) out.files += bytes;
    else if (m.name !== '')
      out.otherAnonymous += bytes; // stacks, vdso
    else if (reservedAfter && next.end - m.start >= 4n * GB) out.wasm += bytes;
    else if (reservedAfter && m.start % ARENA === 0n && next.end - m.start === ARENA) out.malloc += bytes;
    else out.otherAnonymous += bytes;
  });
  return out;
}

/** Samples `pid` every `everyMs` until stopped; stop() gives the sample of highest resident total. */
export function watchResidentPeak(pid: number, everyMs = 1000): { stop(): ResidentBreakdown | null } {
  let peak: ResidentBreakdown | null = null;
  const sample = () => {
    const now = residentBreakdown(pid);
    if (now && (!peak || now.total > peak.total)) peak = now;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
