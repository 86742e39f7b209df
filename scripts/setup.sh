#!/usr/bin/env bash
# Set up racc in a virtual environment (.venv, or $RACC_VENV) on Debian or Ubuntu with only
# python3 installed, without touching the system Python (PEP 668). Installs what is missing,
# non-interactively: python3-venv, a C compiler (the linker Rust needs) and curl with apt-get
# (as root, or through sudo), Rust through rustup into ~/.cargo, then racc itself (building its
# Rust engine) with its test dependencies. Safe to run again: it only rebuilds racc.
# Afterwards: .venv/bin/racc ..., or `. .venv/bin/activate` and then racc ....
# RACC_PROFILE picks the Cargo profile of the engine and racc-live (default release); the test
# command sets test-debug, the profile its Rust tests build, so that one compilation serves both.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${RACC_VENV:-.venv}
PROFILE=${RACC_PROFILE:-release}
PY=${PYTHON:-python3}
say() { echo "== setup: $*"; }
die() { echo "setup: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else return 1
  fi
}

apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  say "installing $* with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
  say "refreshing the package lists (apt-get update)"
  as_root apt-get update -qq >/dev/null 2>&1 && as_root apt-get install -y -qq "$@" >/dev/null
}

command -v "$PY" >/dev/null 2>&1 || die "$PY not found: install Python 3.10 or newer"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "racc needs Python 3.10 or newer ($PY is $("$PY" -V))"

# 1. The virtual environment. Debian's python3 lacks ensurepip until python3-venv is installed;
# without root, the system pip (if any) installs into a venv made without pip.
PIP=("$VENV/bin/python" -m pip)
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  say "using the virtual environment $VENV"
else
  say "creating the virtual environment $VENV ($("$PY" -V))"
  rm -rf "$VENV"
  if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    if apt_install python3-venv || apt_install "python$ver-venv"; then
      "$PY" -m venv "$VENV" || die "could not create $VENV"
    elif "$PY" -m pip --version >/dev/null 2>&1; then
      "$PY" -m venv --without-pip "$VENV" || die "could not create $VENV"
      PIP=("$PY" -m pip --python "$VENV/bin/python")
      say "no ensurepip and no root: installing into $VENV with the system pip"
    else
      die "cannot create a virtual environment: install python3-venv (sudo apt-get install python3-venv)"
    fi
  fi
fi

# 2. Rust (cargo) and the C linker it calls.
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cc >/dev/null 2>&1; then
  apt_install build-essential || die "no C compiler (cc): install build-essential (sudo apt-get install build-essential)"
fi
if command -v cargo >/dev/null 2>&1; then
  say "Rust: $(cargo --version)"
else
  if ! command -v curl >/dev/null 2>&1; then
    apt_install curl ca-certificates || die "rustup's installer needs curl: install curl"
  fi
  say "installing Rust with rustup (into ~/.cargo; a few minutes)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile default --no-modify-path -q \
    || die "rustup failed; see https://rustup.rs"
  say "Rust: $(cargo --version) (add ~/.cargo/bin to PATH to use it outside racc's scripts)"
fi

# 3. racc (editable: Python changes need no reinstall; Rust changes need this script again) and
# its test dependencies. The Rust build is the long part: show the crates as they compile.
say "installing racc and its dependencies into $VENV (building the Rust engine, profile $PROFILE: minutes on a small machine)"
# maturin's PEP 517 backend reads its cargo arguments from MATURIN_PEP517_ARGS.
[ "$PROFILE" = release ] || export MATURIN_PEP517_ARGS="--profile $PROFILE"
log=$(mktemp)
set +e
# (A bash loop, not awk: Debian's mawk reads its input in blocks, which would hide the progress.)
"${PIP[@]}" install -v --disable-pip-version-check -e ".[test]" 2>&1 | tee "$log" | {
  n=0 downloading=0
  set -f  # no globbing of the words of a line
  while IFS= read -r line; do
    case "$line" in
      *"Collecting "* | *"Downloading "*)
        [ "$downloading" = 0 ] && echo "   downloading Python packages" && downloading=1 ;;
      *" Compiling "*)
        n=$((n + 1)); set -- $line
        if [ $((n % 25)) = 1 ] || [[ "$2" == racc* ]]; then echo "   compiling $2 (crate $n)"; fi ;;
      *"Finished \`$PROFILE\`"*) echo "   Rust build finished" ;;
      "Successfully installed"*) echo "   installed: ${line#Successfully installed }" | cut -c1-160 ;;
    esac
  done
}
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" != 0 ]; then
  tail -n 40 "$log"
  die "pip install failed (exit $rc; the full log is $log)"
fi
rm -f "$log"

# 4. The live runtime's binary (`racc live run`; running it needs root), beside the environment's
# python, where racc looks for it first. Not fatal: the simulator works without it.
# --workspace: the features of the shared dependencies (serde_derive's syn) are then those of the
# engine's build above and of the test command's, so they are not compiled again for racc-live.
say "building the live runtime (racc-live)"
if cargo build --profile "$PROFILE" -q --workspace --bin racc-live; then
  cp "${CARGO_TARGET_DIR:-target}/$PROFILE/racc-live" "$VENV/bin/racc-live"
else
  say "racc-live did not build: \`racc live run\` will not be available"
fi
# 5. The kernel programs' toolchain (`racc kernel run`, docs/KERNEL-BPF.md): clang and llvm for the
# BPF objects, libbpf-dev for the loader, bpftool for the kernel's BTF. The objects themselves are
# built on first use into target/bpf/. Not fatal: the simulator and the live runtime need none.
missing=()
command -v clang >/dev/null 2>&1 || missing+=(clang)
command -v llvm-strip >/dev/null 2>&1 || command -v llvm-objdump >/dev/null 2>&1 || missing+=(llvm)
[ -e /usr/include/bpf/libbpf.h ] || missing+=(libbpf-dev)
command -v bpftool >/dev/null 2>&1 || missing+=(bpftool)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}" || say "could not install ${missing[*]}: \`racc kernel run\` will not be available"
fi
say "done: $("$VENV/bin/python" -m racc --version) in $VENV (run $VENV/bin/racc, or . $VENV/bin/activate)"
