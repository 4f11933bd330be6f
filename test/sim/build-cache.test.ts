import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { RtlError } from '../../hdl-gen/gen/rtl-error';
import { MODEL_FILE, buildKey, buildModel, onModelBuild, publish } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { counterBuild, fixture } from './fixtures';

describe('Verilator build cache', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'rnic-build-cache-'));
  const cacheDir = path.join(scratch, 'cache');
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test('a second build with identical inputs is a cache hit at the same path; only a build is announced', () => {
    const told: string[] = [];
    onModelBuild(({ top, doneMs }) => told.push(doneMs === undefined ? `building ${top}` : `built ${top}`));
    const first = buildModel(counterBuild({ cacheDir }));
    expect(told).toEqual(['building counter', 'built counter']);
    expect(first.cached).toBe(false);
    expect(existsSync(first.path)).toBe(true);
    const built = statSync(first.path).mtimeMs;
    const second = buildModel(counterBuild({ cacheDir }));
    onModelBuild(null);
    expect(told).toHaveLength(2);
    expect(second.cached).toBe(true);
    expect(second.path).toBe(first.path);
    // A hit only hashes the sources: the addon is not written again.
    expect(statSync(second.path).mtimeMs).toBe(built);
    expect(path.basename(second.dir)).toBe(`counter-${first.key.slice(0, 16)}`);
    const model = SimModel.open(second);
    model.tick(3);
    expect(model.peek('count')).toBe(3n);
    model.close();
  });

  test('changing one source byte, a flag or the port list changes the key', () => {
    const src = path.join(scratch, 'counter.v');
    copyFileSync(fixture('counter.v'), src);
    const opts = counterBuild({ sources: [src], cacheDir });
    const key = buildKey(opts);
    expect(buildKey(opts)).toBe(key);
    const text = readFileSync(src);
    text[0] = text[0] === 0x2f ? 0x20 : 0x2f; // the first comment slash becomes a space, or back
    writeFileSync(src, text);
    expect(buildKey(opts)).not.toBe(key);
    copyFileSync(fixture('counter.v'), src);
    expect(buildKey(opts)).toBe(key);
    expect(buildKey({ ...opts, trace: true })).not.toBe(key);
    expect(buildKey({ ...opts, extraFlags: ['-Wall'] })).not.toBe(key);
    expect(buildKey({ ...opts, ports: [...opts.ports].reverse() })).not.toBe(key);
  });

  test('the key does not depend on where the sources or the cache live', () => {
    const elsewhere = path.join(scratch, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const src = path.join(elsewhere, 'counter.v');
    copyFileSync(fixture('counter.v'), src);
    expect(buildKey(counterBuild({ sources: [src], cacheDir: elsewhere }))).toBe(buildKey(counterBuild()));
  });

  test('a build that loses the rename race uses the winner and drops its own directory', () => {
    const winner = path.join(scratch, 'race', 'top-0123456789abcdef');
    const loser = path.join(scratch, 'race', '.tmp-top-loser');
    mkdirSync(winner, { recursive: true });
    mkdirSync(loser, { recursive: true });
    writeFileSync(path.join(winner, MODEL_FILE), 'winner');
    writeFileSync(path.join(loser, MODEL_FILE), 'loser');
    expect(publish(loser, winner)).toBe('lost-race');
    expect(existsSync(loser)).toBe(false);
    expect(readFileSync(path.join(winner, MODEL_FILE), 'utf8')).toBe('winner');
  });

  test('a Verilog error is an RtlError naming the file and the line Verilator names', () => {
    const bad = path.join(scratch, 'broken.v');
    writeFileSync(bad, 'module broken(input wire clk);\n  this is not verilog\nendmodule\n');
    const attempt = (): unknown => buildModel({ top: 'broken', sources: [bad], ports: [{ name: 'clk', direction: 'input', width: 1 }], cacheDir });
    expect(attempt).toThrow(RtlError);
    expect(attempt).toThrow(/Verilator rejects the Verilog of broken:\n {2}\S*broken\.v:2: syntax error/);
  });

  test('a port list that disagrees with the module names each wrong port', () => {
    const opts = counterBuild({ cacheDir });
    const ports = [
      opts.ports[0]!,
      { name: 'count', direction: 'output' as const, width: 9 },
      { name: 'enable', direction: 'input' as const, width: 1 },
    ];
    expect(() => buildModel({ ...opts, ports })).toThrow(
      /count is listed as 9 bits but the module declares 8[\s\S]*enable is listed but the module has no such port[\s\S]*rst \(input, 1 bits\) is missing/,
    );
  });

  test('bad build options are rejected before any tool runs', () => {
    expect(() => buildModel(counterBuild({ sources: ['relative/counter.v'] }))).toThrow(/not an absolute path/);
    expect(() => buildModel(counterBuild({ clock: 'clock' }))).toThrow(/clock port clock is not in the port list/);
    expect(() => buildModel(counterBuild({ ports: [{ name: 'clk', direction: 'input', width: 1 }, { name: 'clk', direction: 'input', width: 1 }] }))).toThrow(/listed twice/);
  });
});
