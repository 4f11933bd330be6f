#!/usr/bin/env bash
# Idempotent project setup: npm packages from the committed lockfile, and the Debian tools the
# project runs for real (Verilator, yosys, nextpnr-ice40, icestorm, tshark). A no-op in seconds
# when everything is present; names the missing tool when it cannot install it.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# --- Node ---------------------------------------------------------------------------------------
command -v node >/dev/null || die "node is not installed (Node.js >= 20.6 is required)"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=6)?0:1)' \
  || die "Node.js >= 20.6 is required, found $(node --version)"

# --- Debian packages: command -> package ----------------------------------------------------------
declare -A PKG_OF=(
  [verilator]=verilator
  [yosys]=yosys
  [nextpnr-ice40]=nextpnr-ice40
  [icepack]=fpga-icestorm
  [tshark]=tshark
  [fst2vcd]=gtkwave
  [zlib.h]=zlib1g-dev
)
TOOLS=(verilator yosys nextpnr-ice40 icepack tshark fst2vcd)
missing_tools=()
for t in "${TOOLS[@]}"; do command -v "$t" >/dev/null 2>&1 || missing_tools+=("$t"); done
# Verilator's FST writer (waveforms) links zlib: its header and library come with the -dev package.
[ -f /usr/include/zlib.h ] || missing_tools+=(zlib.h)

if ((${#missing_tools[@]})); then
  pkgs=()
  for t in "${missing_tools[@]}"; do pkgs+=("${PKG_OF[$t]}"); done
  say "installing ${pkgs[*]} (missing: ${missing_tools[*]})"
  if [ "$(id -u)" -eq 0 ]; then SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n)
  else die "missing ${missing_tools[*]}; run as root or with passwordless sudo, or install: apt-get install ${pkgs[*]}"
  fi
  command -v apt-get >/dev/null || die "missing ${missing_tools[*]} and no apt-get on this machine; install: ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq || die "apt-get update failed; cannot install ${pkgs[*]}"
  # wireshark-common asks whether non-root users may capture; answer no, silently.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | "${SUDO[@]}" debconf-set-selections 2>/dev/null || true
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null \
    || die "apt-get install ${pkgs[*]} failed"
  for t in "${missing_tools[@]}"; do
    command -v "$t" >/dev/null 2>&1 || die "$t is still missing after installing ${PKG_OF[$t]}"
  done
fi

# --- npm packages from the lockfile, only when the lockfile changed ----------------------------------
stamp=node_modules/.setup-lock-sha
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
