// A minimal protobuf wire-format reader: enough to walk the Perfetto messages
// hotspan writes (varints, length-delimited fields, fixed64 doubles). Fields
// it is not asked for are skipped by wire type, so newer writers that add
// fields still read.

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

const TWO32 = 4294967296;
const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Thrown when bytes are not valid protobuf; the reader's caller names the file. */
export class ProtoError extends Error {}

export class ProtoReader {
  pos: number;
  /** The last tag read by next(): field number and wire type. */
  field = 0;
  wire = 0;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** Reads the next tag; false at the end of the message. */
  next(): boolean {
    if (this.pos >= this.end) return false;
    const tag = this.varint();
    this.field = Math.floor(tag / 8);
    this.wire = tag % 8;
    if (this.field === 0) throw new ProtoError(`field number 0 at byte ${String(this.pos)}`);
    return true;
  }

  /** Unsigned varint as a number (exact below 2^53; above, the nearest double). */
  varint(): number {
    const b = this.buf;
    let p = this.pos;
    if (p < this.end && b[p] < 0x80) {
      this.pos = p + 1;
      return b[p];
    }
    let lo = 0;
    let hi = 0;
    let shift = 0;
    for (let i = 0; ; i++) {
      if (p >= this.end || i >= 10) throw new ProtoError(`bad varint at byte ${String(this.pos)}`);
      const c = b[p++];
      if (shift < 28) {
        lo |= (c & 0x7f) << shift;
      } else if (shift === 28) {
        lo |= (c & 0x0f) << 28;
        hi |= (c & 0x7f) >> 4;
      } else {
        hi |= (c & 0x7f) << (shift - 32);
      }
      shift += 7;
      if (c < 0x80) break;
    }
    this.pos = p;
    return (hi >>> 0) * TWO32 + (lo >>> 0);
  }

  /** Unsigned varint as a bigint (uuids, exact over all 64 bits). */
  varintBig(): bigint {
    const b = this.buf;
    let x = 0n;
    let shift = 0n;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end || i >= 10) throw new ProtoError(`bad varint at byte ${String(this.pos)}`);
      const c = b[this.pos++];
      x |= BigInt(c & 0x7f) << shift;
      shift += 7n;
      if (c < 0x80) break;
    }
    return BigInt.asUintN(64, x);
  }

  /** int64 varint (two's complement over 10 bytes when negative). */
  int64(): number {
    const start = this.pos;
    const v = this.varint();
    if (v < 2 ** 63) return v;
    this.pos = start;
    return Number(BigInt.asIntN(64, this.varintBig()));
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new ProtoError(`truncated double at byte ${String(this.pos)}`);
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return v;
  }

  /** A length-delimited field's bounds; the reader moves past it. */
  bytes(): [number, number] {
    const n = this.varint();
    const start = this.pos;
    if (start + n > this.end) throw new ProtoError(`length ${String(n)} at byte ${String(start)} runs past its message`);
    this.pos = start + n;
    return [start, start + n];
  }

  /** A reader over the length-delimited field just tagged. */
  sub(): ProtoReader {
    const [s, e] = this.bytes();
    return new ProtoReader(this.buf, s, e);
  }

  string(): string {
    const [s, e] = this.bytes();
    return utf8.decode(this.buf.subarray(s, e));
  }

  skip(): void {
    switch (this.wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.bytes();
        return;
      case WIRE_FIXED32:
        this.pos += 4;
        break;
      default:
        throw new ProtoError(`unsupported wire type ${String(this.wire)} at byte ${String(this.pos)}`);
    }
    if (this.pos > this.end) throw new ProtoError('fixed-width field runs past its message');
  }
}
