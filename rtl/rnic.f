crc32c_w8.v
mpa_tx_w8.v
mpa_rx_w8.v
atomic_unit.v
