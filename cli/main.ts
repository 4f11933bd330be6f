import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ZodError } from 'zod';
import { EXIT_BROKEN_RTL, RtlError } from '../hdl-gen/gen/rtl-error';
import { PACKAGE_ROOT } from '../hdl-gen/gen/paths';
import { formatDemo, runDemo } from './demo';
import { runGen } from './gen-cli';
import { formatSynth, runSynth } from './synth-cli';
import { cosimCommand, toNumber } from './cosim-command';
import { diffCommand } from './diff-cli';
import { progressBar } from './progress-bar';
import { COSIM_DUTS } from '../sim/cosim/registry';
import { type BuildNotice, onModelBuild } from '../sim/verilator/build';
import { UsageError, formatRun, loadScenario, runReport, runScenario, schemaText, toJson, writePcap } from './scenario-cli';

/** `rnic`: a thin shell over library functions (which the tests call directly). */

/** The DUTs of `rnic cosim`, from the registry (sim/cosim/registry.ts). */
const DUT_LIST = COSIM_DUTS.map((d) => `${' '.repeat(30)}${d.name.padEnd(15)}${d.about}`).join('\n');

/** Each command's lines of the help: the command, what it does, its options. */
const COMMAND_HELP: readonly (readonly [command: string, text: string])[] = [
  [
    'demo',
    `  demo      MPA start-up, then frame a stream of ULPDUs with markers and CRC and deframe it
            --json            one JSON object instead of text
            --hex             hex dump of every FPDU
            --isn N           initiator ISN (default 0xfffffb00: the stream crosses 2^32)
            --emss N          effective MSS (default 1460)
            --no-markers      no markers in either direction
            --no-crc          CRC-32C off
            --seed N          payload and cut-point seed (default 1)`,
  ],
  [
    'run',
    `  run       run a scenario file on the golden model: events, summary, memory digests
            --scenario F      the scenario (JSON; see 'rnic schema' and examples/)
            --json            one JSON object instead of text`,
  ],
  [
    'pcap',
    `  pcap      run a scenario and write both directions as a pcap Wireshark reads
            --scenario F -o OUT.pcap`,
  ],
  [
    'schema',
    `  schema    print the JSON Schema of scenario files`,
  ],
  [
    'gen',
    `  gen       generate the Verilog of the RNIC datapath
            --config F        generator configuration (JSON: width, qps, stagDepth, irrqDepth, orqDepth, rqDepth)
            --out DIR         where to write the .v files, rnic.f and manifest.json`,
  ],
  [
    'cosim',
    `  cosim     co-simulate generated RTL in Verilator against the model
            --dut D           what to co-simulate (an option a DUT does not take is refused):
${DUT_LIST}
            --scenario F      rnic: a scenario file (as 'rnic run' takes) with the RTL as its
                              responder on QP 0: the initiator's FPDUs in, the responder's work
                              requests posted, every FPDU, completion and region compared
            --random --seed N --ops M   rnic: M operations (work requests and peer messages, all
                              opcodes, 0..64 KiB, markers/CRC per connection, QPs interleaved)
                              drawn from seed N (default 1, 1000); the seed replays the run
            --config F        rnic: generator configuration (width, qps, stagDepth, irrqDepth, orqDepth, rqDepth)
            --trace           rnic: write a waveform, FST (GTKWave, Surfer), into --out; on a failure one
                              is made anyway, of the cycles around the first mismatch
            --trace-vcd       rnic: the waveform as VCD instead
            --trace-from N --trace-to M   only cycles N..M-1 in the waveform (--trace or --vcd)
            --trace-dir D     rnic: write the transaction traces of the model and the RTL (JSONL: every
                              FPDU in and out, placement, completion; the RTL's with their cycle)
                              into D, of the random run or of --scenario (its QP 0); a failure
                              writes them into --out anyway (see 'rnic diff')
            --out DIR         rnic: where the evidence of a failure goes (default out/cosim):
                              pcapng captures of the first mismatching QP (RTL, model), the waveform,
                              the transaction traces
            --faults RATE     rnic: probability per operation of a fault (default 0.05);
                              mpa, mpa_rx: probability per FPDU of a CRC, marker or length fault;
                              ddp_rx_hdr: per ULPDU of a header fault (H1-H7);
                              rx: per peer message of a fault (every DDP/RDMAP error code)
            --width W         datapath octets: 4, 8, 16, 32, 64 (default 8; rnic, rx, rnic_rx and
                              the transmit and placement blocks: 8 and up)
            --depth N         stag_table entries: a power of two, 16..65536 (default 256)
            --seed N --frames M   random workload: frames (crc32c), FPDUs (mpa*), ULPDUs (ddp_rx_hdr),
                              operations (atomic_unit, stag_table), peer messages (rx), packets
                              (ddp_rx_place) or work requests (ddp_tx, rdmap_tx_resp); the seed
                              replays it
            --rtl DIR         use the Verilog in DIR (rnic.f, manifest.json): hand-edited or tool-processed
            --vcd FILE        dump a waveform of the run: FST when FILE ends in .fst, else VCD
            --plusarg +N=V    a simulator plusarg for the RTL's $value$plusargs (repeatable)
            --json            one JSON object (rnic: seed, ops, packets, mismatches, violations, cycles,
                              simCyclesPerSecond, firstMismatch, ...); exit status 1 on any
                              mismatch (rx, rnic: or protection violation)`,
  ],
  [
    'diff',
    `  diff      the first divergence of two transaction traces (model vs RTL, or two runs), with
            the records before it; exit status 1 when they differ
            A B               trace files of 'rnic cosim --trace-dir' (or of a failing run's --out)
            --cycles          compare the cycle of each record too (two RTL runs)
            --context N       records of context before the divergence (default 3)
            --json            one JSON object`,
  ],
  [
    'synth',
    `  synth     synthesize a module: yosys (+ nextpnr-ice40 for Fmax)
            --module M        e.g. crc32c_w8, mpa_rx_w64, stag_table_d256, atomic_unit
            --target T        ice40 | generic | xilinx
            --config F        generator configuration; --rtl DIR uses the Verilog in DIR instead
            --json            one JSON object`,
  ],
  [
    'bench',
    `  bench     the benchmarks: model CRC and end to end against peers, co-simulation speed, RTL
            efficiency in Verilator cycles (bench/run.ts; peers measured in the same run)
            --json            one JSON line per figure, with its peer and ratio where there is one
            --group G         only e2e | crc | mpa | cosim | rtl
            --seconds S       time per measurement (default 1.5)`,
  ],
  [
    'help',
    `  help      this text`,
  ],
];

const EXIT_STATUS = `exit status: 0 on success, 1 when the run found a mismatch (or a protection violation), 2 on a usage
or configuration error (a bad option, config, scenario, or an option the RTL refuses), 3 when the
RTL cannot be used (--rtl: a missing file, Verilog that Verilator rejects, ports that differ from
manifest.json; the message names the file and the line or port).`;

const HELP = `rnic — iWARP RNIC golden model, Verilog generator and co-simulation

usage: rnic <command> [options]

commands:
${COMMAND_HELP.map(([, text]) => text).join('\n')}

${EXIT_STATUS}`;

/** `rnic <command> --help`: that command's lines and the exit status. */
function commandHelp(command: string): string | null {
  const text = COMMAND_HELP.find(([c]) => c === command)?.[1];
  return text === undefined ? null : `usage: rnic ${command} [options]\n\n${text}\n\n${EXIT_STATUS}`;
}

/** The package's version, for `rnic --version`. */
function version(): string {
  const pkg = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s + '\n')): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    const help = commandHelp(command);
    if (help !== null) {
      out(help);
      return 0;
    }
  }
  try {
    switch (command) {
      case 'demo':
        return demo(rest, out);
      case 'run':
        return run(rest, out);
      case 'pcap':
        return pcap(rest, out);
      case 'gen':
        return gen(rest, out);
      case 'synth':
        return synth(rest, out);
      case 'diff':
        return diffCommand(rest, out);
      case 'cosim':
        return cosim(rest, out);
      case 'bench':
        return bench(rest);
      case 'schema':
        out(schemaText());
        return 0;
      case '--version':
      case '-V':
      case 'version':
        out(`rnic ${version()}`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out(HELP);
        return 0;
      default:
        process.stderr.write(`rnic: unknown command '${command}'\n\n${HELP}\n`);
        return 2;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`rnic ${command}: ${e.message}\n`);
      return 2;
    }
    if (e instanceof RtlError) {
      process.stderr.write(`rnic ${command}: the RTL cannot be used: ${e.message}\n`);
      return EXIT_BROKEN_RTL;
    }
    if (e instanceof ZodError) {
      process.stderr.write(`rnic ${command}: invalid configuration:\n${formatZod(e)}\n`);
      return 2;
    }
    if (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`rnic ${command}: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

function demo(argv: string[], out: (s: string) => void): number {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      json: { type: 'boolean' },
      hex: { type: 'boolean' },
      isn: { type: 'string' },
      emss: { type: 'string' },
      'no-markers': { type: 'boolean' },
      'no-crc': { type: 'boolean' },
      seed: { type: 'string' },
    },
  });
  const report = runDemo({
    ...(values.isn !== undefined && { isn: toNumber(values.isn) }),
    ...(values.emss !== undefined && { emss: toNumber(values.emss) }),
    ...(values.seed !== undefined && { seed: toNumber(values.seed) }),
    markers: !values['no-markers'],
    crc: !values['no-crc'],
  });
  out(values.json ? JSON.stringify(report) : formatDemo(report, !!values.hex));
  const ok = report.received.matched === report.fpdus.length && report.received.errors.length === 0;
  return ok ? 0 : 1;
}

function scenarioArg(values: { scenario?: string }): string {
  if (!values.scenario) throw new UsageError('--scenario F is required');
  return values.scenario;
}

function run(argv: string[], out: (s: string) => void): number {
  const { values } = parseArgs({ args: argv, strict: true, options: { scenario: { type: 'string' }, json: { type: 'boolean' } } });
  const result = runScenario(loadScenario(scenarioArg(values)));
  out(values.json ? toJson(runReport(result)) : formatRun(result));
  return 0;
}

function pcap(argv: string[], out: (s: string) => void): number {
  const { values } = parseArgs({ args: argv, strict: true, options: { scenario: { type: 'string' }, o: { type: 'string', short: 'o' } } });
  const file = scenarioArg(values);
  if (!values.o) throw new UsageError('-o OUT.pcap is required');
  const result = runScenario(loadScenario(file));
  const size = writePcap(result, values.o);
  out(`${values.o}: ${result.segments.length} TCP segments with payload, ${size} octets`);
  return 0;
}

function gen(argv: string[], out: (s: string) => void): number {
  const { values } = parseArgs({ args: argv, strict: true, options: { config: { type: 'string' }, out: { type: 'string' } } });
  if (!values.out) throw new UsageError('--out DIR is required');
  const files = runGen(values.config, values.out);
  out(`${values.out}: ${files.join(', ')}`);
  return 0;
}

/** A line on stderr before and after a Verilator build, so a first run does not sit silent for minutes. */
const announceBuilds: BuildNotice = ({ top, cacheDir, doneMs }) =>
  process.stderr.write(
    doneMs === undefined
      ? `building ${top} with Verilator (seconds for a block, minutes for a top; cached in ${path.relative(process.cwd(), cacheDir) || '.'} after)\n`
      : `built ${top} in ${Math.round(doneMs / 1000)} s\n`,
  );

function cosim(argv: string[], out: (s: string) => void): number {
  onModelBuild(announceBuilds);
  const tty = !argv.includes('--json') && process.stderr.isTTY;
  const o = cosimCommand(argv, { ...(tty && { progress: progressBar((s) => process.stderr.write(s)) }) });
  out(o.output);
  return o.failed ? 1 : 0;
}

function synth(argv: string[], out: (s: string) => void): number {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { module: { type: 'string' }, target: { type: 'string', default: 'ice40' }, config: { type: 'string' }, rtl: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (!values.module) throw new UsageError('--module M is required');
  const r = runSynth({ module: values.module, target: values.target, ...(values.config && { config: values.config }), ...(values.rtl && { rtl: values.rtl }) });
  out(values.json ? JSON.stringify(r) : formatSynth(r));
  return 0;
}


export function formatZod(e: ZodError): string {
  return e.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
}

/** `rnic bench`: bench/run.ts in a process of its own (it times itself; nothing else may run in it). */
function bench(args: string[]): number {
  const script = path.join(PACKAGE_ROOT, 'bench', 'run.ts');
  const child = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { stdio: 'inherit' });
  return child.status ?? 1;
}
