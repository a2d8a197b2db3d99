// Bounded capture of a command's output: the first headBytes and the last tailBytes, whatever it prints.
import type { OutputFilter } from './types';

export const DEFAULT_HEAD_BYTES = 4096;
export const DEFAULT_TAIL_BYTES = 12288;

const isContinuation = (b: number) => (b & 0xc0) === 0x80;

/** Bytes a UTF-8 sequence starting with this lead byte spans (1 for ASCII or a stray byte). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0 && lead <= 0xf7) return 4;
  if (lead >= 0xe0) return lead <= 0xef ? 3 : 1;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** Length of the longest prefix of `buf` that does not end inside a multi-byte character. */
export function utf8PrefixEnd(buf: Buffer): number {
  // A character is at most 4 bytes, so only the last 3 can be an unfinished one.
  for (let i = buf.length - 1, seen = 1; i >= 0 && seen <= 4; i--, seen++) {
    const b = buf[i]!;
    if (isContinuation(b)) continue;
    return sequenceLength(b) > seen ? i : buf.length;
  }
  return buf.length;
}

/** Offset of the first byte of `buf` that does not continue a character begun before it. */
export function utf8SuffixStart(buf: Buffer): number {
  let i = 0;
  while (i < buf.length && i < 3 && isContinuation(buf[i]!)) i++;
  return i;
}

export class OutputCapture {
  private readonly head: Buffer;
  private headLength = 0;
  // A ring: `ring` holds the last min(ringFill, tailBytes) bytes after the head, the oldest at `ringStart`.
  private readonly ring: Buffer;
  private ringStart = 0;
  private ringFill = 0;
  private total = 0;

  constructor(
    readonly headBytes = DEFAULT_HEAD_BYTES,
    readonly tailBytes = DEFAULT_TAIL_BYTES,
    /** Applied to every byte before it is cut, so a secret printed across the cut is still found whole. */
    private filter?: OutputFilter,
  ) {
    if (!Number.isSafeInteger(headBytes) || headBytes < 0) throw new RangeError(`headBytes must be a non-negative integer, got ${headBytes}`);
    if (!Number.isSafeInteger(tailBytes) || tailBytes < 0) throw new RangeError(`tailBytes must be a non-negative integer, got ${tailBytes}`);
    this.head = Buffer.alloc(headBytes);
    this.ring = Buffer.alloc(tailBytes);
  }

  /** How many bytes were written in total. */
  get bytes(): number {
    return this.total;
  }

  write(chunk: Buffer): void {
    this.keep(this.filter ? this.filter.write(chunk) : chunk);
  }

  private keep(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headLength < this.headBytes) {
      const n = Math.min(rest.length, this.headBytes - this.headLength);
      rest.copy(this.head, this.headLength, 0, n);
      this.headLength += n;
      rest = rest.subarray(n);
    }
    if (rest.length === 0 || this.tailBytes === 0) {
      this.ringFill += rest.length;
      return;
    }
    // Only the last tailBytes of a large chunk can survive.
    if (rest.length > this.tailBytes) {
      this.ringFill += rest.length - this.tailBytes;
      rest = rest.subarray(rest.length - this.tailBytes);
    }
    const kept = Math.min(this.ringFill, this.tailBytes);
    let end = (this.ringStart + kept) % this.tailBytes;
    for (let off = 0; off < rest.length; ) {
      const n = Math.min(rest.length - off, this.tailBytes - end);
      rest.copy(this.ring, end, off, off + n);
      off += n;
      end = (end + n) % this.tailBytes;
    }
    const nowKept = kept + rest.length;
    if (nowKept > this.tailBytes) this.ringStart = (this.ringStart + nowKept - this.tailBytes) % this.tailBytes;
    this.ringFill += rest.length;
  }

  /** The kept bytes as text, with the omission line between head and tail when anything was cut. Ends the filter. */
  text(): string {
    const filter = this.filter;
    this.filter = undefined;
    if (filter) this.keep(filter.end());
    const kept = Math.min(this.ringFill, this.tailBytes);
    const tail = Buffer.alloc(kept);
    const firstPart = Math.min(kept, this.tailBytes - this.ringStart);
    this.ring.copy(tail, 0, this.ringStart, this.ringStart + firstPart);
    if (kept > firstPart) this.ring.copy(tail, firstPart, 0, kept - firstPart);
    let head = this.head.subarray(0, this.headLength);
    if (this.ringFill === kept) return Buffer.concat([head, tail]).toString('utf8');

    head = head.subarray(0, utf8PrefixEnd(head));
    const cutTail = tail.subarray(utf8SuffixStart(tail));
    const omitted = this.total - head.length - cutTail.length;
    const headText = head.toString('utf8');
    const sep = headText.length === 0 || headText.endsWith('\n') ? '' : '\n';
    return `${headText}${sep}[... ${omitted} bytes omitted ...]\n${cutTail.toString('utf8')}`;
  }
}
