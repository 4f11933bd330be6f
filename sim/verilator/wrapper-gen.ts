/**
 * Generates the C++ N-API addon around a Verilated model.
 *
 * Speed comes from crossing the JS/C++ boundary rarely: all ports live in one buffer of 32-bit
 * words that JavaScript allocates and the addon keeps a pointer to (see layout.ts), so reading
 * and writing ports costs no native call, and `tick(n)` runs n whole clock cycles per call.
 *
 * One cycle of `tick` (the cocotb-like contract, see README.md):
 *   1. inputs buffer → model (once per call: they cannot change between the n cycles);
 *   2. clock = 0, eval: combinational outputs settle on this cycle's inputs;
 *   3. on the last cycle, snapshot inputs and outputs into the `pre` area: these are the values
 *      present at the rising edge, the ones that decide handshakes;
 *   4. clock = 1, eval: registers take the edge; dump VCD if tracing; cycle++.
 * After the last cycle the outputs are copied to the `now` area (post-edge values).
 * With the sampled-inputs shim (sampled-inputs.ts), step 2 also raises the shim's strobe and
 * step 4 lowers it.
 *
 * Deferred edges (models behind the shim, while no VCD is open). Verilator settles the logic once
 * per eval that has an edge, so the two evals above settle it twice a cycle: on the new inputs
 * (step 2) and on the new registers (step 4). The harness only needs the second for the `now`
 * area, which a co-simulation does not read. So tick defers step 4: a cycle is one eval in which
 * the clock rises (the registers take the previous cycle's edge, with the inputs the shim still
 * holds) and the strobe rises (the shim loads this cycle's inputs), both as non-blocking
 * assignments, then one eval in which both fall, which triggers nothing. The logic settles once,
 * on the new registers and the new inputs: the pre-edge values of this cycle, snapshot into
 * `pre` exactly as above. The last edge stays pending (header word DEFERRED_WORD set): `commit`
 * takes it, alone, and publishes the post-edge outputs; SimModel calls it before reading an output
 * from `now`, and eval and traceOn call it first. Every value a test can read is the same.
 */
import { layoutPorts, FINISH_WORD, CYCLES_WORD, DEFERRED_WORD, type PortSlot } from './layout';
import { verilatorStorage, type PortSpec } from './port-spec';
import { TARGET_CLOCK_MHZ } from '../../hdl-gen/gen/config';
import { CHANNELS_CPP } from './channels-cpp';

/** Bump when the generated code or the buffer layout changes: it is part of the build key. */
export const WRAPPER_VERSION = 8;

/**
 * VCD timestamps per clock cycle, in the design's time precision (`timescale 1ns / 1ps): the
 * period of the clock the datapath is designed for (250 MHz: 4000 ps), so a waveform viewer shows
 * real time and cycle k at k × 4 ns. The rising edge is at the half-cycle.
 */
export const VCD_TIME_PER_CYCLE = Math.round(1e6 / TARGET_CLOCK_MHZ);
export const VCD_TIME_HIGH_PHASE = VCD_TIME_PER_CYCLE / 2;

export interface WrapperOptions {
  readonly top: string;
  readonly ports: readonly PortSpec[];
  readonly clock: string;
  /** Waveform support: 'vcd' (or true), 'fst', or none (false, null). */
  readonly trace: boolean | 'vcd' | 'fst' | null;
  /**
   * The top is behind sampled-inputs.ts's shim, Verilated as `module`: the wrapper raises `strobe`
   * in each low-phase eval so the shim loads the cycle's inputs before the clock edge.
   */
  readonly sampled?: { readonly strobe: string; readonly module: string };
}

const hex32 = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, '0')}u`;

/** Copies one input slot from the buffer (`w`) into the model (`t`), masking unused high bits. */
function inputCopy(s: PortSlot): string[] {
  const m = `t.${s.name}`;
  const top = `(w[${s.offset + s.words - 1}] & ${hex32(s.topMask)})`;
  switch (verilatorStorage(s.width)) {
    case 'CData':
      return [`${m} = static_cast<CData>(${top});`];
    case 'SData':
      return [`${m} = static_cast<SData>(${top});`];
    case 'IData':
      return [`${m} = static_cast<IData>(${top});`];
    case 'QData':
      return [`${m} = (static_cast<QData>(${top}) << 32) | static_cast<QData>(w[${s.offset}]);`];
    case 'VlWide': {
      const lines = [];
      for (let i = 0; i < s.words - 1; i++) lines.push(`${m}.at(${i}) = w[${s.offset + i}];`);
      lines.push(`${m}.at(${s.words - 1}) = ${top};`);
      return lines;
    }
  }
}

/** Copies one output slot from the model (`t`) into the buffer's `now` or `pre` area. */
function outputCopy(s: PortSlot, area: 'now' | 'pre'): string[] {
  const m = `t.${s.name}`;
  const at = (i: number): number => (area === 'now' ? s.offset : s.preOffset) + i;
  switch (verilatorStorage(s.width)) {
    case 'CData':
    case 'SData':
    case 'IData':
      return [`w[${at(0)}] = static_cast<uint32_t>(${m});`];
    case 'QData':
      return [`w[${at(0)}] = static_cast<uint32_t>(${m});`, `w[${at(1)}] = static_cast<uint32_t>(${m} >> 32);`];
    case 'VlWide': {
      const lines = [];
      for (let i = 0; i < s.words; i++) lines.push(`w[${at(i)}] = ${m}.at(${i});`);
      return lines;
    }
  }
}

const indent = (lines: readonly string[]): string => lines.map((l) => `  ${l}`).join('\n');

/** Embeds the port list so SimModel can rebuild the identical layout from the addon alone. */
const portsJson = (ports: readonly PortSpec[]): string =>
  JSON.stringify(ports.map((p) => ({ name: p.name, direction: p.direction, width: p.width })));

/**
 * `run(n, stopChannel, stopField, stopTarget)`: up to n cycles in one call, each what the Testbench
 * loop does with the native channels as its only components: the channels drive → the cycle of
 * `tick(1)` (deferred edge or two evals, dumping as tick does) → the channels sample `pre`. It
 * stops after the cycle in which channel `stopChannel`'s counter `stopField` (0 items, 1 frames)
 * reaches `stopTarget`; returns the cycles run.
 */
function runFunction(cls: string, clock: string, strobe: string | undefined, trace: boolean): string {
  const traceOnly = (text: string): string => (trace ? text : '');
  const classic = `      const uint64_t time = s->cycle * kTimePerCycle;
      s->context->time(time);
      t.${clock} = 0;
${strobe ? `      t.${strobe} = 1;\n` : ''}      t.eval();
${traceOnly(`      if (dumping(*s)) s->vcd->dump(time);\n`)}      snapshotPre(t, w);
      s->context->time(time + kTimeHighPhase);
      t.${clock} = 1;
${strobe ? `      t.${strobe} = 0;\n` : ''}      t.eval();
${traceOnly(`      if (dumping(*s)) s->vcd->dump(time + kTimeHighPhase);\n`)}      ++s->cycle;
${traceOnly(`      if (s->vcd && s->cycle >= s->traceTo) {
        s->vcd->close();
        s->vcd.reset();
      }
`)}`;
  const deferred = `      s->context->time(s->cycle * kTimePerCycle);
      t.${clock} = s->deferred ? 1 : 0;
      t.${strobe} = 1;
      t.eval();
      t.${clock} = 0;
      t.${strobe} = 0;
      t.eval();
      s->deferred = true;
      ++s->cycle;
      snapshotPre(t, w);
      w[kDeferredWord] = 1;
`;
  // The same choice tick(1) makes each cycle: deferred edges unless a waveform dumps this cycle.
  const cycle = strobe
    ? `    if (${trace ? '!s->vcd || s->cycle + 1 <= s->traceFrom' : 'true'}) {
${deferred}    } else {
      commitEdge(*s);
${classic}    }
`
    : `    {
${classic}    }
`;
  return `napi_value runFn(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  Sim* s = liveSim(env, info, &argc, argv);
  if (!s) return nullptr;
  uint32_t n = 0;
  int32_t stopChannel = -1;
  uint32_t stopField = 0;
  double stopTarget = 0;
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &n) != napi_ok) return throwError(env, "run(n, stopChannel, stopField, stopTarget): n must be a number");
  if (argc >= 4 && (napi_get_value_int32(env, argv[1], &stopChannel) != napi_ok || napi_get_value_uint32(env, argv[2], &stopField) != napi_ok ||
                    napi_get_value_double(env, argv[3], &stopTarget) != napi_ok)) {
    return throwError(env, "run(n, stopChannel, stopField, stopTarget): the stop condition must be numbers");
  }
  if (stopChannel >= static_cast<int32_t>(s->channels.size()) || stopField > 1) return throwError(env, "run: no such channel counter to stop on");
  const double* stop = stopChannel >= 0 ? &s->channels[static_cast<size_t>(stopChannel)]->status[stopField] : nullptr;
  ${cls}& t = *s->top;
  uint32_t* w = s->words;
  uint32_t ran = 0;
  while (ran < n) {
    for (const auto& c : s->channels) driveChannel(*c, w);
    copyInputs(t, w);
${cycle}    w[kClockWord] = 1;
    ++ran;
    for (const auto& c : s->channels) sampleChannel(*c, w, s->cycle);
    if (stop && *stop >= stopTarget) break;
  }
  // As tick leaves it: a deferred edge flagged, else the post-edge outputs published.
  if (!s->deferred) copyOutputsNow(t, w);
  publishStatus(*s);
  napi_value out;
  napi_create_uint32(env, ran, &out);
  return out;
}

`;
}

/** The calls that open, feed, pause and drain native channels (channels-cpp.ts). */
const CHANNEL_FUNCTIONS = String.raw`// A typed array argument: its elements, their count, and its type.
bool typedArg(napi_env env, napi_value v, napi_typedarray_type want, void** data, size_t* length) {
  bool isTyped = false;
  if (napi_is_typedarray(env, v, &isTyped) != napi_ok || !isTyped) return false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset = 0;
  if (napi_get_typedarray_info(env, v, &type, length, data, &buffer, &offset) != napi_ok) return false;
  return type == want;
}

Channel* channelArg(napi_env env, Sim* s, napi_value v) {
  uint32_t id = 0;
  if (napi_get_value_uint32(env, v, &id) != napi_ok || id >= s->channels.size()) {
    throwError(env, "no such native channel");
    return nullptr;
  }
  return s->channels[id].get();
}

// A channel call's arguments: the live model, exactly n of them, the first a channel id; null,
// with the JavaScript exception pending, when not ("<usage>: bad arguments" for a wrong count).
Channel* channelCall(napi_env env, napi_callback_info info, size_t n, napi_value* argv, const char* usage) {
  size_t argc = n;
  Sim* s = liveSim(env, info, &argc, argv);
  if (!s) return nullptr;
  if (argc != n) {
    throwError(env, std::string(usage) + ": bad arguments");
    return nullptr;
  }
  return channelArg(env, s, argv[0]);
}

// channel(source: boolean, config: Uint32Array [valid, ready, lastWord, slots, (offset, words)…],
//         status: Float64Array(3)) -> id. Offsets are checked: C++ writes where they point.
napi_value channelFn(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  Sim* s = liveSim(env, info, &argc, argv);
  if (!s) return nullptr;
  bool source = false;
  void* configData = nullptr;
  size_t configLength = 0;
  void* statusData = nullptr;
  size_t statusLength = 0;
  if (argc < 3 || napi_get_value_bool(env, argv[0], &source) != napi_ok || !typedArg(env, argv[1], napi_uint32_array, &configData, &configLength) ||
      !typedArg(env, argv[2], napi_float64_array, &statusData, &statusLength) || statusLength < 3 || configLength < 4) {
    return throwError(env, "channel(source, config, status): bad arguments");
  }
  const uint32_t* config = static_cast<const uint32_t*>(configData);
  auto c = std::make_unique<Channel>();
  c->source = source;
  c->valid = config[0];
  c->ready = config[1];
  c->lastWord = config[2];
  const uint32_t slots = config[3];
  if (configLength != 4 + 2 * static_cast<size_t>(slots)) return throwError(env, "channel: config length disagrees with its slot count");
  const auto inBuffer = [](uint32_t at, uint32_t words) { return at != kNone && static_cast<uint64_t>(at) + words <= kTotalWords; };
  if (!inBuffer(c->valid, 1) || (c->ready != kNone && !inBuffer(c->ready, 1)) || (!source && c->ready == kNone)) return throwError(env, "channel: valid or ready outside the buffer");
  for (uint32_t i = 0; i < slots; ++i) {
    const Slot slot{config[4 + 2 * i], config[5 + 2 * i]};
    if (!inBuffer(slot.offset, slot.words)) return throwError(env, "channel: a payload slot outside the buffer");
    c->slots.push_back(slot);
    c->itemWords += slot.words;
  }
  if (c->lastWord != kNone && c->lastWord >= c->itemWords) return throwError(env, "channel: the frame-end word is not in the payload");
  c->status = static_cast<double*>(statusData);
  napi_create_reference(env, argv[2], 1, &c->statusRef);  // keeps the status array alive
  s->channels.push_back(std::move(c));
  napi_value out;
  napi_create_uint32(env, static_cast<uint32_t>(s->channels.size() - 1), &out);
  return out;
}

// push(id, words: Uint32Array, ends: Uint8Array): appends ends.length items to a source's queue.
napi_value pushFn(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  Channel* c = channelCall(env, info, 3, argv, "push(id, words, ends)");
  if (!c) return nullptr;
  void* words = nullptr;
  size_t wordCount = 0;
  void* ends = nullptr;
  size_t items = 0;
  if (!c->source || !typedArg(env, argv[1], napi_uint32_array, &words, &wordCount) || !typedArg(env, argv[2], napi_uint8_array, &ends, &items) ||
      wordCount != items * c->itemWords) {
    return throwError(env, "push(id, words, ends): a source's items, itemWords words each");
  }
  const uint32_t* w = static_cast<const uint32_t*>(words);
  const uint8_t* e = static_cast<const uint8_t*>(ends);
  c->queue.insert(c->queue.end(), w, w + wordCount);
  c->ends.insert(c->ends.end(), e, e + items);
  return undefinedValue(env);
}

// pause(id, kind, n, i, s, threshold, bits: Uint8Array): the channel's pause from now on.
napi_value pauseFn(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  Channel* c = channelCall(env, info, 7, argv, "pause(id, kind, n, i, s, threshold, bits)");
  if (!c) return nullptr;
  Pause p;
  void* bits = nullptr;
  size_t nBits = 0;
  if (napi_get_value_uint32(env, argv[1], &p.kind) != napi_ok || napi_get_value_uint32(env, argv[2], &p.n) != napi_ok || napi_get_value_uint32(env, argv[3], &p.i) != napi_ok ||
      napi_get_value_uint32(env, argv[4], &p.s) != napi_ok || napi_get_value_double(env, argv[5], &p.threshold) != napi_ok ||
      !typedArg(env, argv[6], napi_uint8_array, &bits, &nBits) || p.kind > Pause::kRandom) {
    return throwError(env, "pause(id, kind, n, i, s, threshold, bits): bad arguments");
  }
  p.bits.assign(static_cast<const uint8_t*>(bits), static_cast<const uint8_t*>(bits) + nBits);
  // The phase must index the period or pattern, or next() would run off it.
  if ((p.kind == Pause::kEvery && (p.n == 0 || p.i >= p.n)) || (p.kind == Pause::kPattern && p.i >= p.bits.size())) return throwError(env, "pause: phase outside the period or pattern");
  c->pause = std::move(p);
  return undefinedValue(env);
}

// drain(id) -> ArrayBuffer: a sink's log since the last drain (per item: cycle low, high, payload).
napi_value drainFn(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  Channel* c = channelCall(env, info, 1, argv, "drain(id)");
  if (!c) return nullptr;
  void* data = nullptr;
  napi_value out;
  napi_create_arraybuffer(env, c->log.size() * sizeof(uint32_t), &data, &out);
  if (!c->log.empty()) std::memcpy(data, c->log.data(), c->log.size() * sizeof(uint32_t));
  c->log.clear();
  return out;
}

`;

export function generateWrapper(opts: WrapperOptions): string {
  const { top, ports, clock, sampled } = opts;
  const format = opts.trace === true ? 'vcd' : opts.trace || null;
  const trace = format !== null;
  const writer = format === 'fst' ? 'VerilatedFstC' : 'VerilatedVcdC';
  const sampleStrobe = sampled?.strobe;
  const layout = layoutPorts(ports);
  const cls = `V${sampled?.module ?? top}`;
  const inputs = layout.slots.filter((s) => s.direction === 'input');
  const outputs = layout.slots.filter((s) => s.direction === 'output');
  const clk = layout.slots.find((s) => s.name === clock);
  if (!clk) throw new Error(`clock port ${clock} is not in the port list`);
  const traceOnly = (text: string): string => (trace ? text : '');
  const sampledOnly = (text: string): string => (sampleStrobe ? text : '');

  return `// Generated by sim/verilator/wrapper-gen.ts (wrapper version ${WRAPPER_VERSION}) for top module \`${top}\`.
// Do not edit: buildModel regenerates it. The buffer layout is described in sim/verilator/layout.ts.
#define NAPI_VERSION 8
#include <node_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "verilated.h"
${traceOnly(`#include "${format === 'fst' ? 'verilated_fst_c.h' : 'verilated_vcd_c.h'}"\n`)}#include "${cls}.h"

namespace {

constexpr uint32_t kTotalWords = ${layout.totalWords};
constexpr uint32_t kNowBase = ${layout.nowBase};
constexpr uint32_t kPreBase = ${layout.preBase};
constexpr uint32_t kInputWords = ${layout.inputWords};
constexpr uint32_t kCyclesWord = ${CYCLES_WORD};
constexpr uint32_t kFinishWord = ${FINISH_WORD};
constexpr uint32_t kDeferredWord = ${DEFERRED_WORD};
constexpr uint32_t kClockWord = ${clk.offset};
constexpr uint64_t kTimePerCycle = ${VCD_TIME_PER_CYCLE};
constexpr uint64_t kTimeHighPhase = ${VCD_TIME_HIGH_PHASE};
constexpr int kTraceDepth = 99;  // every level of hierarchy
const char kTop[] = "${top}";
const char kInstance[] = "TOP";  // Verilator's usual root scope name: signals appear as TOP.${sampled ? `${sampled.module}.${top}` : top}.*
const char kPortsJson[] = R"json(${portsJson(ports)})json";

${CHANNELS_CPP}
struct Sim {
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<${cls}> top;
  uint32_t* words = nullptr;
  napi_ref buffer = nullptr;
  uint64_t cycle = 0;
  bool finished = false;
  bool deferred = false;  // the last tick's rising edge is not taken yet (file comment of wrapper-gen.ts)
  std::vector<std::unique_ptr<Channel>> channels;  // stepped by run() only, in the order opened
${traceOnly(`  std::unique_ptr<${writer}> vcd;
  // The cycles dumped: [traceFrom, traceTo); past traceTo the file is closed (a window, e.g.
  // around a first mismatch, keeps a long run's waveform small).
  uint64_t traceFrom = 0;
  uint64_t traceTo = UINT64_MAX;
`)}};
${traceOnly(`
inline bool dumping(const Sim& s) { return s.vcd && s.cycle >= s.traceFrom && s.cycle < s.traceTo; }
`)}

// Inputs are masked to their width: Verilator assumes the unused high bits of a port are zero.
inline void copyInputs(${cls}& t, const uint32_t* w) {
${indent(inputs.flatMap(inputCopy))}
}

inline void copyOutputsNow(const ${cls}& t, uint32_t* w) {
${indent(outputs.flatMap((s) => outputCopy(s, 'now')))}
}

inline void copyOutputsPre(const ${cls}& t, uint32_t* w) {
${indent(outputs.flatMap((s) => outputCopy(s, 'pre')))}
}

// The values at the rising edge: this cycle's inputs (clock low) and the outputs settled on them.
inline void snapshotPre(const ${cls}& t, uint32_t* w) {
  w[kClockWord] = 0;
  std::memcpy(&w[kPreBase], &w[kNowBase], kInputWords * sizeof(uint32_t));
  copyOutputsPre(t, w);
}

inline void publishStatus(Sim& s) {
  const double cycles = static_cast<double>(s.cycle);
  std::memcpy(&s.words[kCyclesWord], &cycles, sizeof cycles);
  s.words[kFinishWord] = s.context->gotFinish() ? 1u : 0u;
}

${
  sampleStrobe
    ? `// Takes the rising edge the last tick deferred: the registers take it with the inputs the shim
// holds (that tick's), then the post-edge outputs are published, as a classic tick leaves them.
void commitEdge(Sim& s) {
  if (!s.deferred) return;
  ${cls}& t = *s.top;
  t.${clock} = 1;
  t.eval();
  s.deferred = false;
  s.words[kDeferredWord] = 0;
  copyOutputsNow(t, s.words);
}

`
    : `void commitEdge(Sim&) {}

`
}napi_value throwError(napi_env env, const std::string& message) {
  napi_throw_error(env, nullptr, message.c_str());
  return nullptr;
}

napi_value undefinedValue(napi_env env) {
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}

// Every bound function receives its Sim through the callback data pointer: no unwrap per call.
Sim* liveSim(napi_env env, napi_callback_info info, size_t* argc, napi_value* argv) {
  void* data = nullptr;
  napi_get_cb_info(env, info, argc, argv, nullptr, &data);
  Sim* s = static_cast<Sim*>(data);
  if (s->finished) {
    throwError(env, std::string("model ") + kTop + " is closed");
    return nullptr;
  }
  return s;
}

napi_value evalFn(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Sim* s = liveSim(env, info, &argc, nullptr);
  if (!s) return nullptr;
  commitEdge(*s);
  ${cls}& t = *s->top;
  uint32_t* w = s->words;
${
  sampleStrobe
    ? `  // The shim loads the inputs with the clock as it was; then the strobe falls (an eval must see
  // it, or the next rise is no edge) and the clock moves if the test clocks the model by hand:
  // its registers then take the new inputs, as without the shim.
  const CData clockBefore = t.${clock};
  copyInputs(t, w);
  const CData clockNow = t.${clock};
  t.${clock} = clockBefore;
  t.${sampleStrobe} = 1;
  t.eval();
  t.${sampleStrobe} = 0;
  t.${clock} = clockNow;
  t.eval();`
    : `  copyInputs(t, w);  // includes the clock, so a test may clock the model by hand
  t.eval();`
}
  copyOutputsNow(t, w);
  publishStatus(*s);
  return nullptr;
}

napi_value tickFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  Sim* s = liveSim(env, info, &argc, argv);
  if (!s) return nullptr;
  uint32_t n = 1;
  if (argc >= 1 && napi_get_value_uint32(env, argv[0], &n) != napi_ok) return throwError(env, "tick(n): n must be a number");
  ${cls}& t = *s->top;
  uint32_t* w = s->words;
  copyInputs(t, w);
${sampledOnly(`  if (${trace ? '!s->vcd || s->cycle + n <= s->traceFrom' : 'true'}) {
    for (uint32_t i = 0; i < n; ++i) {
      s->context->time(s->cycle * kTimePerCycle);
      t.${clock} = s->deferred ? 1 : 0;  // the previous cycle's edge, if deferred
      t.${sampleStrobe} = 1;  // and this cycle's inputs: the logic settles once, on both
      t.eval();
      t.${clock} = 0;
      t.${sampleStrobe} = 0;
      t.eval();  // both fall: nothing is triggered, and the next rises are edges
      s->deferred = true;
      ++s->cycle;
    }
    snapshotPre(t, w);
    w[kClockWord] = 1;
    w[kDeferredWord] = 1;
    publishStatus(*s);
    return nullptr;
  }
  commitEdge(*s);
`)}  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t time = s->cycle * kTimePerCycle;
    s->context->time(time);
    t.${clock} = 0;
${sampledOnly(`    t.${sampleStrobe} = 1;  // the shim loads this cycle's inputs; their logic settles\n`)}    t.eval();
${traceOnly(`    if (dumping(*s)) s->vcd->dump(time);\n`)}    if (i + 1 == n) snapshotPre(t, w);
    s->context->time(time + kTimeHighPhase);
    t.${clock} = 1;
${sampledOnly(`    t.${sampleStrobe} = 0;\n`)}    t.eval();
${traceOnly(`    if (dumping(*s)) s->vcd->dump(time + kTimeHighPhase);\n`)}    ++s->cycle;
  }
${traceOnly(`  if (s->vcd && s->cycle >= s->traceTo) {
    s->vcd->close();
    s->vcd.reset();
  }
`)}
  w[kClockWord] = 1;
  copyOutputsNow(t, w);
  publishStatus(*s);
  return nullptr;
}

napi_value commitFn(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Sim* s = liveSim(env, info, &argc, nullptr);
  if (!s) return nullptr;
  commitEdge(*s);
  publishStatus(*s);
  return nullptr;
}

${runFunction(cls, clock, sampleStrobe, trace)}${CHANNEL_FUNCTIONS}napi_value cyclesFn(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  void* data = nullptr;
  napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data);
  napi_value out;
  napi_create_double(env, static_cast<double>(static_cast<Sim*>(data)->cycle), &out);
  return out;
}

${
  trace
    ? `napi_value traceOnFn(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  Sim* s = liveSim(env, info, &argc, argv);
  if (!s) return nullptr;
  size_t len = 0;
  if (argc < 1 || napi_get_value_string_utf8(env, argv[0], nullptr, 0, &len) != napi_ok) return throwError(env, "traceOn(path, from, to): path must be a string");
  std::string path(len, '\\0');
  napi_get_value_string_utf8(env, argv[0], path.data(), len + 1, &len);
  double from = 0;
  double to = -1;  // no end
  if (argc >= 2 && napi_get_value_double(env, argv[1], &from) != napi_ok) return throwError(env, "traceOn(path, from, to): from must be a number");
  if (argc >= 3 && napi_get_value_double(env, argv[2], &to) != napi_ok) return throwError(env, "traceOn(path, from, to): to must be a number");
  commitEdge(*s);  // the waveform starts after an edge; ticks are not deferred while it dumps
  if (s->vcd) s->vcd->close();
  s->traceFrom = static_cast<uint64_t>(from);
  s->traceTo = to < 0 ? UINT64_MAX : static_cast<uint64_t>(to);
  s->vcd = std::make_unique<${writer}>();
  s->top->trace(s->vcd.get(), kTraceDepth);
  s->vcd->open(path.c_str());
  if (!s->vcd->isOpen()) {
    s->vcd.reset();
    return throwError(env, "cannot open waveform file " + path);
  }
  return undefinedValue(env);
}

napi_value traceOffFn(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Sim* s = liveSim(env, info, &argc, nullptr);
  if (!s) return nullptr;
  if (s->vcd) {
    s->vcd->close();
    s->vcd.reset();
  }
  return undefinedValue(env);
}
`
    : `napi_value traceOnFn(napi_env env, napi_callback_info) {
  return throwError(env, std::string("model ") + kTop + " was built without trace: true, so it cannot write a VCD");
}

napi_value traceOffFn(napi_env env, napi_callback_info) { return undefinedValue(env); }
`
}
void release(napi_env env, Sim* s) {
  if (s->buffer) {
    napi_delete_reference(env, s->buffer);
    s->buffer = nullptr;
  }
  for (const auto& c : s->channels) {
    if (c->statusRef) napi_delete_reference(env, c->statusRef);
  }
  s->channels.clear();
}

napi_value finishFn(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  void* data = nullptr;
  napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data);
  Sim* s = static_cast<Sim*>(data);
  if (s->finished) return undefinedValue(env);
  s->top->final();
${traceOnly(`  if (s->vcd) {\n    s->vcd->close();\n    s->vcd.reset();\n  }\n`)}  s->finished = true;
  s->top.reset();  // free the model now rather than whenever the GC gets to the JS object
  s->context.reset();
  release(env, s);
  return undefinedValue(env);
}

void finalizeSim(napi_env env, void* data, void*) {
  Sim* s = static_cast<Sim*>(data);
  release(env, s);
  delete s;
}

// create(buffer: ArrayBuffer, plusargs?: string[]) -> { eval, tick, commit, run, channel, push, pause, drain, cycles, traceOn, traceOff, finish }
// plusargs ("+NAME=value") reach $test$plusargs / $value$plusargs in initial blocks.
napi_value createFn(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  bool isBuffer = false;
  if (argc < 1 || napi_is_arraybuffer(env, argv[0], &isBuffer) != napi_ok || !isBuffer) return throwError(env, "create(buffer): buffer must be an ArrayBuffer");
  void* bytes = nullptr;
  size_t length = 0;
  napi_get_arraybuffer_info(env, argv[0], &bytes, &length);
  if (length < kTotalWords * sizeof(uint32_t)) return throwError(env, "create(buffer): buffer is smaller than the port layout");
  std::vector<std::string> args{"model"};
  bool isArray = false;
  if (argc > 1 && napi_is_array(env, argv[1], &isArray) == napi_ok && isArray) {
    uint32_t n = 0;
    napi_get_array_length(env, argv[1], &n);
    for (uint32_t i = 0; i < n; i++) {
      napi_value item;
      napi_get_element(env, argv[1], i, &item);
      size_t len = 0;
      if (napi_get_value_string_utf8(env, item, nullptr, 0, &len) != napi_ok) return throwError(env, "create(buffer, plusargs): plusargs must be strings");
      std::string a(len, '\\0');
      napi_get_value_string_utf8(env, item, a.data(), len + 1, &len);
      args.push_back(a);
    }
  }

  Sim* s = new Sim();
  s->words = static_cast<uint32_t*>(bytes);
  // The reference keeps the ArrayBuffer (and so the pointer above) alive as long as the model.
  napi_create_reference(env, argv[0], 1, &s->buffer);
  s->context = std::make_unique<VerilatedContext>();
  std::vector<const char*> argp;
  for (const std::string& a : args) argp.push_back(a.c_str());
  s->context->commandArgs(static_cast<int>(argp.size()), argp.data());
${traceOnly(`  s->context->traceEverOn(true);  // must precede time 0, or a later traceOn aborts\n`)}  s->top = std::make_unique<${cls}>(s->context.get(), kInstance);
  copyInputs(*s->top, s->words);
${sampledOnly(`  s->top->${sampleStrobe} = 1;  // the shim loads the inputs (sampled-inputs.ts)\n`)}  s->top->eval();  // runs initial blocks and settles outputs before the first tick
${sampledOnly(`  s->top->${sampleStrobe} = 0;\n  s->top->eval();  // sees the strobe fall, so the first tick's rise is an edge\n`)}  copyOutputsNow(*s->top, s->words);
  std::memcpy(&s->words[kPreBase], &s->words[kNowBase], (kTotalWords - kPreBase) * sizeof(uint32_t));
  publishStatus(*s);

  napi_value obj;
  napi_create_object(env, &obj);
  const napi_property_descriptor methods[] = {
      {"eval", nullptr, evalFn, nullptr, nullptr, nullptr, napi_default, s},
      {"tick", nullptr, tickFn, nullptr, nullptr, nullptr, napi_default, s},
      {"commit", nullptr, commitFn, nullptr, nullptr, nullptr, napi_default, s},
      {"run", nullptr, runFn, nullptr, nullptr, nullptr, napi_default, s},
      {"channel", nullptr, channelFn, nullptr, nullptr, nullptr, napi_default, s},
      {"push", nullptr, pushFn, nullptr, nullptr, nullptr, napi_default, s},
      {"pause", nullptr, pauseFn, nullptr, nullptr, nullptr, napi_default, s},
      {"drain", nullptr, drainFn, nullptr, nullptr, nullptr, napi_default, s},
      {"cycles", nullptr, cyclesFn, nullptr, nullptr, nullptr, napi_default, s},
      {"traceOn", nullptr, traceOnFn, nullptr, nullptr, nullptr, napi_default, s},
      {"traceOff", nullptr, traceOffFn, nullptr, nullptr, nullptr, napi_default, s},
      {"finish", nullptr, finishFn, nullptr, nullptr, nullptr, napi_default, s},
  };
  napi_define_properties(env, obj, sizeof methods / sizeof methods[0], methods);
  napi_add_finalizer(env, obj, s, finalizeSim, nullptr, nullptr);
  return obj;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value create, top, ports, totalWords, version, trace;
  napi_create_function(env, "create", NAPI_AUTO_LENGTH, createFn, nullptr, &create);
  napi_create_string_utf8(env, kTop, NAPI_AUTO_LENGTH, &top);
  napi_create_string_utf8(env, kPortsJson, NAPI_AUTO_LENGTH, &ports);
  napi_create_uint32(env, kTotalWords, &totalWords);
  napi_create_uint32(env, ${WRAPPER_VERSION}, &version);
  napi_get_boolean(env, ${trace ? 'true' : 'false'}, &trace);
${traceOnly(`  napi_value traceFormat;
  napi_create_string_utf8(env, "${format}", NAPI_AUTO_LENGTH, &traceFormat);
`)}
  const napi_property_descriptor props[] = {
      {"create", nullptr, nullptr, nullptr, nullptr, create, napi_enumerable, nullptr},
      {"top", nullptr, nullptr, nullptr, nullptr, top, napi_enumerable, nullptr},
      {"portsJson", nullptr, nullptr, nullptr, nullptr, ports, napi_enumerable, nullptr},
      {"totalWords", nullptr, nullptr, nullptr, nullptr, totalWords, napi_enumerable, nullptr},
      {"wrapperVersion", nullptr, nullptr, nullptr, nullptr, version, napi_enumerable, nullptr},
      {"trace", nullptr, nullptr, nullptr, nullptr, trace, napi_enumerable, nullptr},
${traceOnly(`      {"traceFormat", nullptr, nullptr, nullptr, nullptr, traceFormat, napi_enumerable, nullptr},
`)}
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
`;
}
