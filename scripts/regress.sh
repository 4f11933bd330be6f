#!/usr/bin/env bash
# The long co-simulation regression (minutes, not part of `make test`): the whole RNIC, every
# block and the receive path against the model, at 8 and 64 octets, with faults, from one seed.
#   REGRESS_SEED=N  replays a run (default 1); REGRESS_SCALE=K multiplies the workload (default 1).
set -uo pipefail
cd "$(dirname "$0")/.."
seed=${REGRESS_SEED:-1}
k=${REGRESS_SCALE:-1}
failed=0
run() {
  local name=$1; shift
  local t0=$SECONDS
  if out=$(node bin/rnic.mjs cosim "$@" --seed "$seed" --json 2>&1); then
    echo "PASS  $name ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    echo "FAIL  $name ($((SECONDS - t0)) s): replay with: npx rnic cosim $* --seed $seed"
    echo "$out" | head -c 2000; echo
  fi
}
for w in 8 64; do
  run "rnic_top w$w" --dut rnic --width "$w" --ops $((10000 * k)) --faults 0.1
  run "rx w$w" --dut rx --width "$w" --frames $((30000 * k)) --faults 0.1
  run "rnic_rx w$w" --dut rnic_rx --width "$w" --frames $((20000 * k)) --faults 0.1
  run "mpa w$w" --dut mpa --width "$w" --frames $((20000 * k)) --faults 0.02
  run "ddp_rx_hdr w$w" --dut ddp_rx_hdr --width "$w" --frames $((50000 * k)) --faults 0.3
  run "crc32c w$w" --dut crc32c --width "$w" --frames $((200000 * k))
done
run "atomic_unit" --dut atomic_unit --frames $((100000 * k))
run "stag_table d1024" --dut stag_table --depth 1024 --frames $((200000 * k))
echo "regression (seed $seed): $failed failed"
exit $(( failed > 0 ))
