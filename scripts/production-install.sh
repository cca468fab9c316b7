#!/usr/bin/env bash
# Production install (README, "Running in production"): builds this checkout, then installs the
# compiled services with their runtime dependencies only (no dev dependencies, no sources) into
# TARGET, from where the launchers run as programs (their shebang execs the `node` on PATH; the
# native modules are built for the Node.js that ran this script):
#   TARGET/packages/relay/bin/relay.js serve
#   TARGET/packages/delivery/bin/delivery.js serve
# Usage: scripts/production-install.sh TARGET
# TARGET must be missing, empty, or an earlier install made by this script (then it is replaced;
# the services keep their state elsewhere). The container recipe (deploy/docker/Dockerfile) runs
# this same script.
set -euo pipefail

if [ "$#" -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 TARGET" >&2
  exit 2
fi
TARGET=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MARKER=.production-install
PACKAGES=(common relay delivery)

if [ -e "$TARGET" ] && [ -n "$(ls -A "$TARGET")" ] && [ ! -f "$TARGET/$MARKER" ]; then
  echo "$TARGET is neither empty nor an earlier production install: refusing to write into it" >&2
  exit 2
fi

# 1. Build. TypeScript and the type packages are dev dependencies, so the build needs them; a
#    checkout without node_modules gets them without install scripts (the native modules are
#    not compiled for a build that never loads them; `npm ci` makes a development tree again).
cd "$ROOT"
if [ ! -x node_modules/.bin/tsc ]; then
  npm ci --ignore-scripts --no-audit --no-fund --prefer-offline
fi
npm run --silent build

# 2. Copy what runs: the manifests and lockfile, each package's compiled dist/ and launchers,
#    the delivery dashboard's files, and the READMEs (the operator's documentation, which the systemd units point at).
if [ -e "$TARGET" ]; then
  find "$TARGET" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
fi
mkdir -p "$TARGET"
# Marks the folder as this script's from the start, so a failed install can be replaced.
echo "incomplete" >"$TARGET/$MARKER"
cp package.json package-lock.json README.md "$TARGET/"
for name in "${PACKAGES[@]}"; do
  mkdir -p "$TARGET/packages/$name"
  cp "packages/$name/package.json" "$TARGET/packages/$name/"
  if [ -f "packages/$name/README.md" ]; then cp "packages/$name/README.md" "$TARGET/packages/$name/"; fi
  cp -R "packages/$name/dist" "$TARGET/packages/$name/"
  rm -f "$TARGET/packages/$name/dist/.tsbuildinfo"
  if [ -d "packages/$name/bin" ]; then cp -R "packages/$name/bin" "$TARGET/packages/$name/"; fi
  # The delivery dashboard: its compiled scripts and its static page and styles.
  if [ -d "packages/$name/dashboard" ]; then
    mkdir -p "$TARGET/packages/$name/dashboard"
    cp -R "packages/$name/dashboard/dist" "packages/$name/dashboard/public" "$TARGET/packages/$name/dashboard/"
    rm -f "$TARGET/packages/$name/dashboard/dist/.tsbuildinfo"
  fi
done

# 3. Runtime dependencies only, exactly as locked (from npm's cache where it holds them: a
#    registry that stalls then fails the install less often). The root scripts (prepare builds with tsc)
#    belong to the checkout, not to the install. The native modules (better-sqlite3, bcrypt)
#    are compiled here, for the Node.js on PATH (against the headers npm_config_nodedir names,
#    when set), then loaded as a check.
cd "$TARGET"
npm pkg delete scripts
npm ci --omit=dev --no-audit --no-fund --prefer-offline
node --input-type=module -e '
  const { default: Database } = await import("better-sqlite3");
  const { default: bcrypt } = await import("bcrypt");
  new Database(":memory:").close();
  bcrypt.hashSync("check", 4);
'
# A better-sqlite3 compiled against Node 24.19+ headers aborts the service at random (see the
# probe): refuse such an install rather than deploy it. The probe misses it once in ten runs.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for _ in 1 2 3; do
  if ! node "$ROOT/scripts/sqlite-gc-probe.mjs" "$TARGET/node_modules/better-sqlite3" "$scratch/probe" >/dev/null 2>&1; then
    echo "better-sqlite3 aborts under garbage collection with this build (Node 24.19+ headers," >&2
    echo "nodejs/node#65446): build it against Node 24.18.1's headers, see the README," >&2
    echo "\"Node.js versions\"; the install in $TARGET is incomplete" >&2
    exit 1
  fi
done

commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
printf 'commit %s\nnode %s\n' "$commit" "$(node --version)" >"$MARKER"
echo "installed in $TARGET (commit $commit, node $(node --version))"
