crc32c_w8.v
mpa_tx_w8.v
mpa_rx_w8.v
ddp_rx_hdr_w8.v
stag_table_d256.v
atomic_unit.v
