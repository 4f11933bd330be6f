/**
 * The golden model: the package's main entry, `import { ... } from 'iwarp-rnic'` (docs/package.md).
 * CRC-32C and MPA (RFC 5044, RFC 6581), DDP (RFC 5041), RDMAP (RFC 5040, RFC 7306), the STag table
 * and host memory, the RNIC endpoint, two endpoints over TCP, and scenarios.
 */
export {
  CRC32C,
  Crc32c,
  crc32c,
  crcWireOctets,
  readCrcField,
  writeCrcField,
  deriveCrcMatrices,
  deriveCrcMatrixSet,
  applyCrcMatrices,
  type CrcMatrices,
  type CrcParams,
} from './crc32c';
export * from './mpa';
export * from './ddp/constants';
export { decodeDdpHeader, encodeDdpSegment, headerSize, writeDdpHeader, type DdpHeader, type TaggedHeader, type UntaggedHeader } from './ddp/header';
export { segmentMessage, type DdpMessage, type TaggedMessage, type UntaggedMessage } from './ddp/segmenter';
export * from './rdmap/constants';
export * from './rdmap/headers';
export * from './rdmap/atomics';
export * from './terminate-codes';
export * from './memory/access';
export * from './memory/stag';
export { HostMemory, ADDRESS_SPACE, PAGE_SIZE, type Endian } from './memory/host-memory';
export { StagTable, RegionSpecSchema, ADDRESSING_MODES, firstTaggedOffset, type Addressing, type Region, type RegionSpec, type TaggedCheck, type TaggedFault } from './memory/stag-table';
export { Rnic } from './rnic/rnic';
export { RdmapEndpoint, type EndpointConfig, type OutboundUlpdu } from './rnic/endpoint';
export { RdmapOptionsSchema, DEFAULT_RDMAP_OPTIONS, type RdmapOptions, type RdmapOptionsInput } from './rnic/options';
export type { CompletionKind, CompletionStatus, RnicEvent, Side } from './rnic/events';
export { needsRfc7306, type RtrKind, type WorkRequest } from './rnic/work-request';
export { IwarpLink, type LinkConfig, type LinkFaults, type TcpSegmentRecord } from './link/iwarp-link';
export {
  ScenarioSchema,
  OpSchema,
  OP_FAULTS,
  CONNECTION_FAULTS,
  parseScenario,
  scenarioJsonSchema,
  type ConnectionFaultKind,
  type OpFaultKind,
  type OpName,
  type Scenario,
  type ScenarioInput,
  type ScenarioOp,
} from './scenario/schema';
export { runScenario, DEFAULT_ISN, type RegionDigest, type RunOptions, type ScenarioResult, type ScenarioSummary } from './scenario/run';
export { hex, parseHexOctets } from './util/hex';
export { prng, type Prng } from './util/prng';
