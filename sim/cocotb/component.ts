/**
 * Anything a Testbench steps each clock cycle. `drive` sets this cycle's inputs before the
 * clock edge; `sample` reads the pre-edge snapshot after it (SimModel.peekPre…), which is when
 * a handshake is decided. Drivers implement both, monitors only `sample`.
 */
export interface Component {
  drive?(): void;
  sample?(): void;
}
