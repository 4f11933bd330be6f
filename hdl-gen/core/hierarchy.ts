import type { Module } from './module';

/**
 * `top` and every module it instantiates, directly or further down, each once (by name), children
 * before their parents and `top` last: the order a filelist lists them in.
 */
export function withDescendants(top: Module): Module[] {
  const out = new Map<string, Module>();
  const visit = (m: Module): void => {
    if (out.has(m.name)) return;
    for (const inst of m.instances) visit(inst.module);
    out.set(m.name, m);
  };
  visit(top);
  return [...out.values()];
}
