#!/usr/bin/env bash
# Install agent-boundary and everything it needs on a Debian machine:
#   scripts/install.sh [--prefix DIR] [--deps-only]
# Debian packages (build tools, libraries, test tools), nono (pinned, built with cargo),
# then our build installed into the prefix (default /usr/local as root, ~/.local otherwise).
set -euo pipefail

NONO_VERSION=0.80.0
SRT_VERSION=0.0.83            # npm @anthropic-ai/sandbox-runtime (the srt backend)
DEVCONTAINER_CLI_VERSION=0.89.0  # npm @devcontainers/cli (projects with a devcontainer.json)
CLAUDE_CODE_VERSION=2.1.328   # npm @anthropic-ai/claude-code: only the end-to-end tests run it
repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=""
deps_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --deps-only) deps_only=1; shift ;;
    *) echo "usage: scripts/install.sh [--prefix DIR] [--deps-only]" >&2; exit 2 ;;
  esac
done
if [ -z "$prefix" ]; then
  if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
fi

say() { printf 'install: %s\n' "$*" >&2; }

debian_packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libboost-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev
  libgtest-dev libgmock-dev googletest
  python3 python3-pytest hyperfine
  awscli gh   # the credential exporters (aws.profile, github.push); tests use the real ones
  nodejs bubblewrap socat ripgrep  # the srt backend (Node script, bwrap, socat proxies, rg)
  podman runc debootstrap       # the devcontainer backend and its locally built base image
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    say "missing Debian packages: ${missing[*]}"
    say "run as root: apt-get install ${missing[*]}"
    exit 1
  fi
  say "installing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# nono: pinned, built from crates.io with the lockfile it was released with. Installed into
# the prefix's bin, a directory no sandbox is granted, so it can be pinned safely.
nono_ok() {
  local v
  v=$("$prefix/bin/nono" --version 2>/dev/null | awk '{print $2}') || return 1
  [ "$v" = "$NONO_VERSION" ]
}
if ! nono_ok; then
  command -v cargo >/dev/null || { say "cargo is needed to build nono; install Rust with rustup"; exit 1; }
  say "building nono $NONO_VERSION (cargo install nono-cli --locked; this takes several minutes)"
  cargo install nono-cli --version "$NONO_VERSION" --locked --root "$prefix" --quiet
fi

# npm: Debian's `npm` package, unless the installed nodejs brings its own (NodeSource's
# nodejs conflicts with Debian's npm).
if ! command -v npm >/dev/null; then
  [ "$(id -u)" = 0 ] || { say "npm is missing; run as root: apt-get install npm"; exit 1; }
  say "installing Debian package: npm"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi

# srt and the Dev Containers CLI: pinned npm packages installed into the prefix (its bin and
# lib/node_modules), which no sandbox is granted, so the backends can pin them.
npm_ok() {  # package version
  local v
  v=$(npm ls -g --prefix "$prefix" --depth=0 --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("dependencies",{}).get(sys.argv[1],{}).get("version",""))' "$1") || return 1
  [ "$v" = "$2" ]
}
for pkg in "@anthropic-ai/sandbox-runtime@$SRT_VERSION" "@devcontainers/cli@$DEVCONTAINER_CLI_VERSION"; do
  name=${pkg%@*}
  if ! npm_ok "$name" "${pkg##*@}"; then
    say "installing $pkg (npm, into $prefix)"
    npm install -g --prefix "$prefix" --no-fund --no-audit --loglevel=error "$pkg" >/dev/null
  fi
done

# Claude Code, pinned, for the end-to-end tests (tests/integration/e2e) only: a directory of
# its own under the prefix, off every PATH, so nothing else picks it up.
claude_dir=$prefix/lib/agent-boundary-test/claude-code
claude_pkg=$claude_dir/node_modules/@anthropic-ai/claude-code/package.json
if [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$claude_pkg" 2>/dev/null)" != "$CLAUDE_CODE_VERSION" ]; then
  say "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION (npm, into $claude_dir; for the end-to-end tests)"
  mkdir -p "$claude_dir"
  npm install --prefix "$claude_dir" --no-fund --no-audit --loglevel=error "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null
fi

"$repo/scripts/build-base-image.sh" || say "no devcontainer base image; the devcontainer backend refuses sessions until scripts/build-base-image.sh has run (as root)"

[ "$deps_only" = 1 ] && exit 0

build=${AB_BUILD_DIR:-$repo/build-release}
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAB_BUILD_TESTS=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$build"
cmake --install "$build" >/dev/null
say "installed agent-boundary into $prefix (binary: $prefix/bin/agent-boundary)"
"$prefix/bin/agent-boundary" plugins
