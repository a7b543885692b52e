#!/bin/sh
# Gives cubecl-llvm (used by the `cuda`, `rocm` and `cpu` runtimes) an LLVM without the internet:
# its build script downloads tracel's LLVM 23 bundle unless the bundle folder already exists, so
# this installs Debian's LLVM 22 (and the lld headers the AMDGPU shims of `rocm` include) and
# presents it as that folder. Idempotent; needs root for apt.
set -eu
bundle="${XDG_DATA_HOME:-$HOME/.local/share}/tracel/tracel-llvm-23.1.0-4"
if [ -e "$bundle/.tracel-llvm-installed" ]; then
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  llvm-22-dev libpolly-22-dev liblld-22-dev libzstd-dev >/dev/null
mkdir -p "$bundle/bin"
# The bundler turns the absolute library paths llvm-config prints into `-l<stem>` flags; print
# plain `-l` names instead.
cat >"$bundle/bin/llvm-config" <<'SH'
#!/bin/sh
/usr/lib/llvm-22/bin/llvm-config "$@" | sed -E 's#/[^ ]*/lib([A-Za-z0-9_+-]+)\.so#-l\1#g'
SH
chmod +x "$bundle/bin/llvm-config"
touch "$bundle/.tracel-llvm-installed"
