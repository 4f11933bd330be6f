import { AXI_RESP, WORD_BITS, registerAt, type Register, type RegisterMap, type StagedPort } from '../../hdl-gen/lib/regmap';

/**
 * The AXI4-Lite configuration block as a model (the behaviour hdl-gen/blocks/rnic-cfg-axil.ts
 * documents), over the same register map: writes in the order the block takes them, each with its
 * response and the record a commit sends, and reads. Timing is the harness's business: a write
 * takes effect between its request and its response, a port's record goes out some cycles after
 * its commit.
 */
export interface ModelCommit {
  readonly port: string;
  /** The port's fields by record name (the commit's and the staged ones). */
  readonly fields: Readonly<Record<string, bigint>>;
}

const MASK32 = (1n << BigInt(WORD_BITS)) - 1n;
const mask = (w: number): bigint => (1n << BigInt(w)) - 1n;

export class CfgAxilModel {
  /** Word values of the read-write registers, by offset. */
  private readonly words = new Map<number, bigint>();

  constructor(readonly map: RegisterMap) {
    for (const r of map.registers) if (r.access === 'RW') this.words.set(r.offset, 0n);
  }

  /** The register's value now (null for STATUS: it follows the top's handshakes). */
  value(r: Register): bigint | null {
    if (r.role.kind === 'constant') return r.role.value;
    if (r.role.kind === 'status') return null;
    return this.words.get(r.offset)!;
  }

  read(addr: number): { readonly resp: number; readonly data: bigint | null; readonly register: Register | null } {
    const r = registerAt(this.map, addr);
    if (!r) return { resp: AXI_RESP.DECERR, data: 0n, register: null };
    return { resp: AXI_RESP.OKAY, data: this.value(r), register: r };
  }

  /** Applies a write as the block does: its response, and the record a commit sends. */
  write(addr: number, data: number, strb: number): { readonly resp: number; readonly register: Register | null; readonly commit: ModelCommit | null } {
    const r = registerAt(this.map, addr);
    if (!r) return { resp: AXI_RESP.DECERR, register: null, commit: null };
    if (r.access === 'RO') return { resp: AXI_RESP.SLVERR, register: r, commit: null };
    let m = 0n;
    for (let i = 0; i < WORD_BITS / 8; i++) if ((strb >> i) & 1) m |= 0xffn << BigInt(8 * i);
    const merged = ((this.words.get(r.offset)! & ~m) | (BigInt(data >>> 0) & m)) & MASK32;
    if (r.role.kind === 'staged') {
      this.words.set(r.offset, merged & mask(r.fields[0]!.width));
      return { resp: AXI_RESP.OKAY, register: r, commit: null };
    }
    const port = this.map.ports.find((p) => p.name === (r.role as { port: string }).port)!;
    if (merged >= port.limit) return { resp: AXI_RESP.SLVERR, register: r, commit: null };
    this.words.set(r.offset, merged);
    return { resp: AXI_RESP.OKAY, register: r, commit: { port: port.name, fields: this.record(port, merged) } };
  }

  /** The record port `p` sends for commit value `commit`: the staged words assembled, the commit decoded. */
  private record(p: StagedPort, commit: bigint): Record<string, bigint> {
    const out: Record<string, bigint> = { ...p.commit.decode(commit) };
    for (const f of p.staged) {
      let v = 0n;
      for (const r of p.fieldRegisters.get(f)!) v |= this.words.get(r.offset)! << BigInt(r.fields[0]!.fieldLo);
      out[f] = v;
    }
    return out;
  }
}
