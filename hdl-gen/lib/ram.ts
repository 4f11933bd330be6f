import { type Expr, lit, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { Memory, ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * A simple dual-port RAM (one write port, one read port, one clock) whose read is synchronous, so
 * yosys maps it to block RAM on iCE40 (SB_RAM40_4K) and Xilinx (RAMB18/RAMB36). The read latency is
 * declared: 1 (the memory's read register) or 2 (plus an output register, the BRAM's DOA_REG, for
 * timing). A read of the address written in the same cycle returns the old word (read-first);
 * `context.ts` builds forwarding on top for read-modify-write.
 */
export interface Ram {
  readonly memory: Memory;
  readonly width: number;
  readonly depth: number;
  readonly addrWidth: number;
  readonly latency: 1 | 2;
  /** The word read `latency` cycles after `read(addr, enable)` was called with enable high. */
  readonly data: Signal;
  /** Declares the read port: call once, in module scope. */
  read(addr: Expr, enable: Expr): void;
  /** Declares the write port: call once, in module scope. */
  write(enable: Expr, addr: Expr, data: Expr): void;
}

export function ram(m: ModuleBuilder, name: string, opts: { readonly width: number; readonly depth: number; readonly latency: 1 | 2; readonly doc?: string }): Ram {
  const { width, depth, latency } = opts;
  if (latency !== 1 && latency !== 2) throw new HdlError(`ram '${name}': read latency must be 1 or 2, got ${latency}`);
  const memory = m.memory(`${name}_mem`, width, depth);
  const first = m.reg(`${name}_rd_data${latency === 2 ? '_0' : ''}`, width, { doc: `${name}: the memory's read register${opts.doc ? ` (${opts.doc})` : ''}` });
  const data = latency === 2 ? m.reg(`${name}_rd_data`, width, { doc: `${name}: the output register (read latency 2)` }) : first;
  let reads = 0;
  let writes = 0;
  return {
    memory,
    width,
    depth,
    addrWidth: memory.addrWidth,
    latency,
    data,
    read(addr, enable) {
      if (reads++) throw new HdlError(`ram '${name}' has one read port`);
      m.sync(() => {
        m.when(enable, () => m.set(first, memory.read(addr)));
        if (latency === 2) m.set(data, first);
      });
    },
    write(enable, addr, d) {
      if (writes++) throw new HdlError(`ram '${name}' has one write port`);
      m.memoryWrite(memory, enable, addr, d);
    },
  };
}

/** Bits to index `n` entries. */
export const indexBits = (n: number): number => Math.max(1, Math.ceil(Math.log2(n)));

/** `v` delayed by `cycles` registers named `<name>_d1`…: for pipelines that carry a value along. */
export function delay(m: ModuleBuilder, name: string, v: Expr, cycles: number, opts: { readonly reset?: number } = {}): Expr {
  let e = v;
  for (let i = 1; i <= cycles; i++) {
    const r = m.reg(`${name}_d${i}`, v.width, opts.reset !== undefined ? { reset: opts.reset } : {});
    const prev = e;
    m.sync(() => m.set(r, prev));
    e = r;
  }
  return e;
}

/** 1 when `a` equals `b` and `valid`: the hazard compare of a forwarding path. */
export const matches = (valid: Expr, a: Expr, b: Expr): Expr => valid.and(a.eq(b));

/** The newest of several candidates that match (index 0 is the newest), or `otherwise`. */
export function newest(candidates: readonly { readonly hit: Expr; readonly value: Expr }[], otherwise: Expr): Expr {
  return candidates.reduceRight((acc, c) => mux(c.hit, c.value, acc), otherwise);
}

export const zero = (width: number): Expr => lit(width, 0);
