/**
 * An AXI4-Lite master (cocotbext-axi's AxiLiteMaster) on a DUT's `<prefix>_*` slave ports
 * (`s_axil_awaddr`, …, `s_axil_rready`): queued writes and reads, each with a callback for its
 * response. The five channels run independently (AMBA AXI IHI 0022, A3.2): a write's address and
 * data are offered each on its own channel, in either order, and several writes (and reads) may be
 * outstanding; each channel has its own pause generator (a valid not yet raised waits, one raised
 * holds until the handshake; bready / rready drop while paused).
 *
 * It checks the slave's side of the protocol and reports what breaks it in `violations`: a
 * response without a request (B before both the write's AW and W handshakes, R before AR), and a
 * response withdrawn or changed while it waits for ready (A3.2.1: once VALID is asserted it must
 * stay asserted, with its payload, until the handshake).
 */
import type { PortHandle, SimModel } from '../verilator/model';
import type { Component } from './component';
import { never, type PauseGen } from './pause';

export interface AxilMasterOptions {
  /** Port prefix (default 's_axil'). */
  readonly prefix?: string;
  readonly awPause?: PauseGen;
  readonly wPause?: PauseGen;
  readonly arPause?: PauseGen;
  /** bready low while paused. */
  readonly bPause?: PauseGen;
  /** rready low while paused. */
  readonly rPause?: PauseGen;
  /** Writes (reads) offered and not yet answered, at most (default 4 each). */
  readonly maxWrites?: number;
  readonly maxReads?: number;
}

export interface AxilWrite {
  readonly addr: number;
  readonly data: number;
  /** Octet strobes, bit i for data bits [8i+7:8i] (default all four). */
  readonly strb?: number;
  readonly done?: (resp: number, cycle: number) => void;
}

export interface AxilRead {
  readonly addr: number;
  readonly done?: (resp: number, data: number, cycle: number) => void;
}

interface WriteState extends AxilWrite {
  aw: boolean;
  w: boolean;
}

interface ReadState extends AxilRead {
  ar: boolean;
}

export class AxilMaster implements Component {
  readonly violations: string[] = [];
  private readonly writes: WriteState[] = [];
  private readonly reads: ReadState[] = [];
  /** Indices into `writes` / `reads` of the item each request channel offers (-1: none). */
  private awAt = -1;
  private wAt = -1;
  private arAt = -1;
  private bReady = false;
  private rReady = false;
  /** A response seen waiting at the last edge: what must still be there. */
  private bHeld: number | null = null;
  private rHeld: { resp: number; data: number } | null = null;
  private readonly p: Record<string, PortHandle>;
  private readonly pause: { aw: PauseGen; w: PauseGen; ar: PauseGen; b: PauseGen; r: PauseGen };
  private readonly maxWrites: number;
  private readonly maxReads: number;
  private writesDone = 0;
  private readsDone = 0;

  constructor(
    private readonly m: SimModel,
    o: AxilMasterOptions = {},
  ) {
    const prefix = o.prefix ?? 's_axil';
    const names = ['awaddr', 'awprot', 'awvalid', 'awready', 'wdata', 'wstrb', 'wvalid', 'wready', 'bresp', 'bvalid', 'bready', 'araddr', 'arprot', 'arvalid', 'arready', 'rdata', 'rresp', 'rvalid', 'rready'];
    this.p = Object.fromEntries(names.map((n) => [n, m.handle(`${prefix}_${n}`)]));
    this.pause = { aw: o.awPause ?? never(), w: o.wPause ?? never(), ar: o.arPause ?? never(), b: o.bPause ?? never(), r: o.rPause ?? never() };
    this.maxWrites = o.maxWrites ?? 4;
    this.maxReads = o.maxReads ?? 4;
    for (const n of ['awvalid', 'wvalid', 'arvalid', 'bready', 'rready', 'awprot', 'arprot']) m.pokeNumber(this.p[n]!, 0);
  }

  write(w: AxilWrite): void {
    this.writes.push({ ...w, aw: false, w: false });
  }

  read(r: AxilRead): void {
    this.reads.push({ ...r, ar: false });
  }

  /** Nothing queued, offered or waiting for a response. */
  get idle(): boolean {
    return this.writes.length === 0 && this.reads.length === 0;
  }

  /** Writes (reads) answered so far. */
  get counts(): { readonly writes: number; readonly reads: number } {
    return { writes: this.writesDone, reads: this.readsDone };
  }

  drive(): void {
    const m = this.m;
    const p = this.p;
    const window = Math.min(this.writes.length, this.maxWrites);
    // AW: the oldest write whose address has not gone, within the window of outstanding writes.
    if (this.awAt < 0) {
      const i = this.writes.findIndex((w) => !w.aw);
      if (i >= 0 && i < window && !this.pause.aw.next()) {
        this.awAt = i;
        m.pokeNumber(p.awaddr!, this.writes[i]!.addr);
      }
    }
    m.pokeNumber(p.awvalid!, this.awAt >= 0 ? 1 : 0);
    if (this.wAt < 0) {
      const i = this.writes.findIndex((w) => !w.w);
      if (i >= 0 && i < window && !this.pause.w.next()) {
        this.wAt = i;
        const w = this.writes[i]!;
        m.pokeNumber(p.wdata!, w.data >>> 0);
        m.pokeNumber(p.wstrb!, w.strb ?? 0xf);
      }
    }
    m.pokeNumber(p.wvalid!, this.wAt >= 0 ? 1 : 0);
    if (this.arAt < 0) {
      const i = this.reads.findIndex((r) => !r.ar);
      if (i >= 0 && i < Math.min(this.reads.length, this.maxReads) && !this.pause.ar.next()) {
        this.arAt = i;
        m.pokeNumber(p.araddr!, this.reads[i]!.addr);
      }
    }
    m.pokeNumber(p.arvalid!, this.arAt >= 0 ? 1 : 0);
    this.bReady = !this.pause.b.next();
    this.rReady = !this.pause.r.next();
    m.pokeNumber(p.bready!, this.bReady ? 1 : 0);
    m.pokeNumber(p.rready!, this.rReady ? 1 : 0);
  }

  sample(): void {
    const m = this.m;
    const p = this.p;
    const at = m.cycles;
    const bad = (s: string) => void (this.violations.length < 20 && this.violations.push(`${s} (cycle ${at})`));
    // Responses first: a response in the same cycle as its request's handshake is early.
    const bValid = m.peekPreNumber(p.bvalid!) === 1;
    const bResp = m.peekPreNumber(p.bresp!);
    if (this.bHeld !== null && (!bValid || bResp !== this.bHeld)) bad(bValid ? `bresp changed from ${this.bHeld} to ${bResp} before bready` : 'bvalid dropped before bready');
    this.bHeld = bValid && !this.bReady ? bResp : null;
    if (bValid && this.bReady) {
      const w = this.writes[0];
      if (!w || !w.aw || !w.w) bad(w ? `a write response before the write's ${w.aw ? 'data' : 'address'} was taken` : 'a write response with no write outstanding');
      else {
        this.writes.shift();
        this.awAt = this.awAt > 0 ? this.awAt - 1 : this.awAt;
        this.wAt = this.wAt > 0 ? this.wAt - 1 : this.wAt;
        this.writesDone++;
        w.done?.(bResp, at);
      }
    }
    const rValid = m.peekPreNumber(p.rvalid!) === 1;
    const rResp = m.peekPreNumber(p.rresp!);
    const rData = m.peekPreNumber(p.rdata!) >>> 0;
    if (this.rHeld && (!rValid || rResp !== this.rHeld.resp || rData !== this.rHeld.data)) bad(rValid ? 'rdata / rresp changed before rready' : 'rvalid dropped before rready');
    this.rHeld = rValid && !this.rReady ? { resp: rResp, data: rData } : null;
    if (rValid && this.rReady) {
      const r = this.reads[0];
      if (!r || !r.ar) bad('a read response with no read outstanding');
      else {
        this.reads.shift();
        this.arAt = this.arAt > 0 ? this.arAt - 1 : this.arAt;
        this.readsDone++;
        r.done?.(rResp, rData, at);
      }
    }
    // Request handshakes.
    if (this.awAt >= 0 && m.peekPreNumber(p.awready!) === 1) {
      this.writes[this.awAt]!.aw = true;
      this.awAt = -1;
    }
    if (this.wAt >= 0 && m.peekPreNumber(p.wready!) === 1) {
      this.writes[this.wAt]!.w = true;
      this.wAt = -1;
    }
    if (this.arAt >= 0 && m.peekPreNumber(p.arready!) === 1) {
      this.reads[this.arAt]!.ar = true;
      this.arAt = -1;
    }
  }
}
