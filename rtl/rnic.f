crc32c_w8.v
