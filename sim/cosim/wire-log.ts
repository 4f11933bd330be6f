import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MpaFramer, type MpaStreamConfig } from '../../ts-model/mpa';
import { CAPTURE_HOSTS } from '../pcap/scenario-pcap';
import { TcpConversation } from '../pcap/tcp-frames';

/**
 * The TCP payload of one co-simulated connection, both ways, as it went: the peer's FPDUs into the
 * RTL (`in`) and the RTL's FPDUs out (`out`), in the order they happened. `write` turns it into two
 * captures of the same connection for Wireshark/tshark: `rtl.pcap` with what the RTL sent, and
 * `model.pcap` with what the model would have sent (its ULPDUs framed at the same sequence
 * numbers), so the first differing packet is one `tshark -r` away on each side.
 */
export class WireLog {
  private readonly entries: { from: 'peer' | 'rtl'; data: Uint8Array }[] = [];

  /** `rxSeq` / `txSeq`: sequence numbers of the first octet each way; `tx` frames the model's side. */
  constructor(
    private readonly rxSeq: number,
    private readonly txSeq: number,
    private readonly tx: MpaStreamConfig,
  ) {}

  in(fpdu: Uint8Array): void {
    this.entries.push({ from: 'peer', data: fpdu });
  }

  out(fpdu: Uint8Array): void {
    this.entries.push({ from: 'rtl', data: fpdu });
  }

  /** Writes `<name>-rtl.pcap` and `<name>-model.pcap` into `dir`; returns their paths. */
  write(dir: string, name: string, modelSent: readonly Uint8Array[]): string[] {
    mkdirSync(dir, { recursive: true });
    const framer = new MpaFramer(this.tx);
    const model = modelSent.map((u) => framer.frame(u).wire);
    const capture = (rtlSide: (i: number, d: Uint8Array) => Uint8Array | undefined) => {
      // The peer is the initiator; the RTL's QP the responder. Each SYN takes a number.
      const conv = new TcpConversation({ ...CAPTURE_HOSTS.initiator, isn: (this.rxSeq - 1) >>> 0 }, { ...CAPTURE_HOSTS.responder, isn: (this.txSeq - 1) >>> 0 });
      conv.handshake();
      let k = 0;
      for (const e of this.entries) {
        if (e.from === 'peer') conv.send('initiator', e.data);
        else {
          const d = rtlSide(k++, e.data);
          if (d) conv.send('responder', d);
        }
      }
      // The model's FPDUs the RTL never sent.
      for (; k < model.length; k++) {
        const d = rtlSide(k, new Uint8Array(0));
        if (d) conv.send('responder', d);
      }
      return conv.pcap();
    };
    const files = [join(dir, `${name}-rtl.pcap`), join(dir, `${name}-model.pcap`)];
    writeFileSync(files[0]!, capture((_i, d) => (d.length ? d : undefined)));
    writeFileSync(files[1]!, capture((i) => model[i]));
    return files;
  }
}
