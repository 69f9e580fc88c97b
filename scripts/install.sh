#!/usr/bin/env bash
# Install agent-boundary and everything it needs on a Debian machine:
#   scripts/install.sh [--prefix DIR] [--deps-only]
# Debian packages (build tools, libraries, test tools), nono (pinned, built with cargo), srt
# and the Dev Containers CLI (pinned, npm), the devcontainer base image, then our build
# installed into the prefix (default /usr/local as root, ~/.local otherwise). Every step
# that is already done is skipped; long steps say every 30 s that they are still running.
# Environment: AB_BUILD_DIR (default build-release/), AB_WERROR=ON (CI: warnings fail).
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
case "$prefix" in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

say() { printf 'install: %s\n' "$*" >&2; }
elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
started=$SECONDS

# A long step: its output goes to a log; every 30 s one line says it is still running and
# what it printed last (a 24-minute nono build must not look like a hang). On failure the
# end of the log is shown.
long_step() {  # label command...
  local label=$1; shift
  local log; log=$(mktemp "${TMPDIR:-/tmp}/agent-boundary-install.XXXXXX")
  local t0=$SECONDS
  say "$label ..."
  "$@" >"$log" 2>&1 &
  local pid=$! next=$((SECONDS + 30)) rc=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ "$SECONDS" -ge "$next" ]; then
      local last; last=$(tail -n 1 "$log" | cut -c1-100)
      say "  ... still ${label%% (*} ($(elapsed $((SECONDS - t0)))${last:+: $last})"
      next=$((SECONDS + 30))
    fi
  done
  wait "$pid" || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 40 "$log" >&2
    say "$label FAILED (exit $rc after $(elapsed $((SECONDS - t0)))); full log: $log"
    exit "$rc"
  fi
  rm -f "$log"
  say "$label: done in $(elapsed $((SECONDS - t0)))"
}

debian_packages=(
  build-essential cmake ninja-build pkg-config git clang clang-format
  libboost-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev
  libgtest-dev libgmock-dev googletest
  python3 python3-pytest python3-pytest-xdist hyperfine
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
  export DEBIAN_FRONTEND=noninteractive
  long_step "apt-get update" apt-get update -qq
  long_step "installing ${#missing[@]} Debian packages (${missing[*]})" \
    apt-get install -y -qq "${missing[@]}"
fi

# nono: pinned, built from crates.io with the lockfile it was released with, into the
# prefix's bin, a directory no sandbox may write, so it can be pinned safely. A user
# installing into ~/.local reuses the one root installed in /usr/local/bin (agent-boundary
# looks there after its own directory).
nono_build=""
nono_version() { "$1" --version 2>/dev/null | awk '{print $2}'; }
if [ "$(nono_version "$prefix/bin/nono")" = "$NONO_VERSION" ]; then
  say "nono $NONO_VERSION: already in $prefix/bin"
elif [ "$prefix" != /usr/local ] && [ "$(nono_version /usr/local/bin/nono)" = "$NONO_VERSION" ]; then
  say "nono $NONO_VERSION: using /usr/local/bin/nono"
else
  command -v cargo >/dev/null || {
    say "cargo is needed to build nono; install Rust with rustup:"
    say "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal && . ~/.cargo/env"
    exit 1
  }
  # The longest step by far (~24 min on 2 cores, from scratch): it builds while the steps
  # below download and build, and is waited for before anything needs it.
  long_step "building nono $NONO_VERSION (cargo install nono-cli --locked; ~24 min on 2 cores, alongside the next steps)" \
    cargo install nono-cli --version "$NONO_VERSION" --locked --root "$prefix" &
  nono_build=$!
  # If a later step fails, the build goes with it.
  trap 'if [ -n "$nono_build" ]; then pkill -TERM -P "$nono_build"; kill "$nono_build"; fi 2>/dev/null' EXIT
fi
nono_ready() {
  [ -n "$nono_build" ] || return 0
  say "waiting for the nono build ..."
  local rc=0
  wait "$nono_build" || rc=$?
  nono_build=""
  [ "$rc" = 0 ] || exit "$rc"
}

# npm: Debian's `npm` package, unless the installed nodejs brings its own (NodeSource's
# nodejs conflicts with Debian's npm).
if ! command -v npm >/dev/null; then
  [ "$(id -u)" = 0 ] || { say "npm is missing; run as root: apt-get install npm"; exit 1; }
  long_step "installing Debian package npm" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm
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
  if npm_ok "$name" "${pkg##*@}"; then
    say "$pkg: already in $prefix"
  else
    long_step "installing $pkg (npm, into $prefix)" \
      npm install -g --prefix "$prefix" --no-fund --no-audit --loglevel=error "$pkg"
  fi
done

# Claude Code, pinned, for the end-to-end tests (tests/integration/e2e) only: a directory of
# its own under the prefix, off every PATH, so nothing else picks it up.
claude_dir=$prefix/lib/agent-boundary-test/claude-code
claude_pkg=$claude_dir/node_modules/@anthropic-ai/claude-code/package.json
if [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$claude_pkg" 2>/dev/null)" != "$CLAUDE_CODE_VERSION" ]; then
  mkdir -p "$claude_dir"
  long_step "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION (npm, into $claude_dir; for the end-to-end tests)" \
    npm install --prefix "$claude_dir" --no-fund --no-audit --loglevel=error "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
fi

if [ "$(id -u)" = 0 ]; then
  # Not fatal: everything but the devcontainer backend works without it.
  (long_step "devcontainer base image (scripts/build-base-image.sh)" \
    "$repo/scripts/build-base-image.sh") ||
    say "no devcontainer base image; the devcontainer backend refuses sessions until scripts/build-base-image.sh has run"
else
  say "no devcontainer base image: building it needs root (scripts/build-base-image.sh); the devcontainer backend refuses sessions until then"
fi

if [ "$deps_only" = 1 ]; then
  nono_ready
  say "dependencies ready in $(elapsed $((SECONDS - started)))"
  exit 0
fi

build=${AB_BUILD_DIR:-$repo/build-release}
long_step "configuring agent-boundary (Release) in $build" \
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAB_BUILD_TESTS=OFF \
  -DAB_WERROR="${AB_WERROR:-OFF}" -DCMAKE_INSTALL_PREFIX="$prefix"
long_step "building agent-boundary" cmake --build "$build"
long_step "installing agent-boundary into $prefix" cmake --install "$build"
nono_ready
say "installed in $(elapsed $((SECONDS - started))): $prefix/bin/agent-boundary"
"$prefix/bin/agent-boundary" plugins
case ":$PATH:" in
  *":$prefix/bin:"*) ab=agent-boundary ;;
  *) ab=$prefix/bin/agent-boundary ;;
esac
echo "next: scripts/test.sh to test it all, or try \`$ab run -- ls\` in a project (README.md, \"Using it\")"
