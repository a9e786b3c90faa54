#!/usr/bin/env bash
# Installs every Debian package sramplan needs to build, test and run. Idempotent.
# Usage: scripts/install-deps.sh            (build + test dependencies)
#        scripts/install-deps.sh --export   (also Python/torch packages for models/export_zoo.py)
set -euo pipefail
pkgs=(
  cmake ninja-build g++ make pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-libcbc-dev libisl-dev
  libflatbuffers-dev libopenblas-dev libdnnl-dev valgrind
  clang libclang-rt-14-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
  chromium
  libarmnntfliteparser-dev libarmnn-cpuref-backend22
)
if [[ "${1:-}" == "--export" ]]; then
  pkgs+=(python3-torchvision python3-onnx)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages already installed" >&2
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
