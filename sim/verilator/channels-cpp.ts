/**
 * The C++ of the native valid/ready channels every generated addon carries (wrapper-gen.ts pastes
 * it in; nothing in it depends on the model). A channel is a driver that lives in the addon so a
 * batch of cycles (`run(n, …)`) needs no call into JavaScript: it works on the shared port buffer
 * by word offsets that TypeScript computes from the layout (sim/verilator/channel.ts), so no
 * per-model C++ is needed.
 *
 * - source: a queue of items, each the words of its payload ports in order plus an end-of-frame
 *   flag. Each cycle, before the model ticks: the pause is drawn; an item already offered stays on
 *   the bus unchanged (AXI4-Stream, ARM IHI 0051 §2.2.1); otherwise, unpaused and with an item
 *   queued, the next one is written and valid raised, else valid is lowered. After the tick, from
 *   the pre-edge snapshot: valid && ready takes the item.
 * - sink: each cycle ready = !pause; after the tick, ready && valid (pre-edge) appends the cycle and
 *   the payload's pre-edge words to a log that TypeScript drains in one call.
 *
 * Both keep counters in a Float64Array TypeScript reads without a native call (STATUS_* in
 * channel.ts): items taken, frames taken (items that end one), the cycle of the last frame.
 * The pause generators replay sim/cocotb/pause.ts bit for bit, so a seed gives the same cycles.
 */
export const CHANNELS_CPP = `// Native valid/ready channels (sim/verilator/channels-cpp.ts): drivers stepped inside run().
constexpr uint32_t kNone = 0xffffffffu;  // no such port (a source without ready, a sink without tlast)
constexpr size_t kCompactAfter = 4096;   // taken items dropped from a source queue's front in bulk

// One boolean per cycle, true = hold off; the same sequences as sim/cocotb/pause.ts.
struct Pause {
  enum Kind : uint32_t { kNever = 0, kAlways = 1, kEvery = 2, kPattern = 3, kRandom = 4 };
  uint32_t kind = kNever;
  uint32_t n = 1;  // every: the period
  uint32_t i = 0;  // every: the phase; pattern: the position
  std::vector<uint8_t> bits;  // pattern: 1 = pause
  uint32_t s = 0;  // random: the splitmix32 state
  double threshold = 0;  // random: pPause * 2^32 as TypeScript computed it (a uint32 compares exactly)

  bool next() {
    switch (kind) {
      case kAlways:
        return true;
      case kEvery:
        i = i + 1 == n ? 0 : i + 1;
        return i == 0;
      case kPattern: {
        const bool pause = bits[i] != 0;
        i = i + 1 == bits.size() ? 0 : i + 1;
        return pause;
      }
      case kRandom: {
        // splitmix32 (ts-model/util/prng.ts): Math.imul is the low 32 bits of the product.
        s += 0x9e3779b9u;
        uint32_t z = s;
        z = (z ^ (z >> 16)) * 0x85ebca6bu;
        z = (z ^ (z >> 13)) * 0xc2b2ae35u;
        z ^= z >> 16;
        return static_cast<double>(z) < threshold;
      }
      default:
        return false;
    }
  }
};

struct Slot {
  uint32_t offset;  // source: word of the input in the now area; sink: word of the output in pre
  uint32_t words;
};

struct Channel {
  bool source = true;
  uint32_t valid = kNone;  // source: the valid input (now area); sink: the valid output (pre area)
  uint32_t ready = kNone;  // source: the ready output (pre area) or kNone; sink: the ready input (now)
  std::vector<Slot> slots;
  uint32_t itemWords = 0;
  uint32_t lastWord = kNone;  // sink: the item word whose non-zero value ends a frame; kNone: each item does
  Pause pause;
  double* status = nullptr;  // [items taken, frames taken, cycle of the last frame]
  napi_ref statusRef = nullptr;
  // source
  std::vector<uint32_t> queue;  // itemWords per item
  std::vector<uint8_t> ends;    // per item: it ends a frame
  size_t head = 0;              // the next item to offer (or the one offered)
  bool offering = false;
  // sink
  bool readyDriven = false;
  std::vector<uint32_t> log;  // per item: cycle (low, high word), then itemWords of payload
};

inline void driveChannel(Channel& c, uint32_t* w) {
  if (!c.source) {
    c.readyDriven = !c.pause.next();
    w[c.ready] = c.readyDriven ? 1u : 0u;
    return;
  }
  const bool paused = c.pause.next();  // drawn every cycle, as AxisSource does
  if (c.offering) return;              // an offered item stays until taken
  if (paused || c.head == c.ends.size()) {
    w[c.valid] = 0;
    return;
  }
  const uint32_t* item = &c.queue[c.head * c.itemWords];
  for (const Slot& slot : c.slots) {
    std::memcpy(&w[slot.offset], item, slot.words * sizeof(uint32_t));
    item += slot.words;
  }
  w[c.valid] = 1;
  c.offering = true;
}

inline void endItem(Channel& c, bool endsFrame, uint64_t cycle) {
  c.status[0] += 1;
  if (!endsFrame) return;
  c.status[1] += 1;
  c.status[2] = static_cast<double>(cycle);
}

// Reads the pre-edge snapshot of the cycle just run (cycle = the model's count after it).
inline void sampleChannel(Channel& c, const uint32_t* w, uint64_t cycle) {
  if (c.source) {
    if (!c.offering || (c.ready != kNone && w[c.ready] == 0)) return;
    c.offering = false;
    endItem(c, c.ends[c.head] != 0, cycle);
    ++c.head;
    if (c.head >= kCompactAfter && c.head * 2 >= c.ends.size()) {
      c.queue.erase(c.queue.begin(), c.queue.begin() + static_cast<std::ptrdiff_t>(c.head * c.itemWords));
      c.ends.erase(c.ends.begin(), c.ends.begin() + static_cast<std::ptrdiff_t>(c.head));
      c.head = 0;
    }
    return;
  }
  if (!c.readyDriven || w[c.valid] == 0) return;
  const size_t at = c.log.size();
  c.log.resize(at + 2 + c.itemWords);
  uint32_t* entry = &c.log[at];
  entry[0] = static_cast<uint32_t>(cycle);
  entry[1] = static_cast<uint32_t>(cycle >> 32);
  uint32_t* out = entry + 2;
  for (const Slot& slot : c.slots) {
    std::memcpy(out, &w[slot.offset], slot.words * sizeof(uint32_t));
    out += slot.words;
  }
  endItem(c, c.lastWord == kNone || entry[2 + c.lastWord] != 0, cycle);
}
`;
