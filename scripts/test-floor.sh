#!/usr/bin/env bash
# `npm run test:floor`: part of the suite on the oldest Node.js that engines.node admits (22.14), while
# `npm test` runs all of it on the pinned Node 24. The runtime is the official binary from the npm registry
# (.ci/runtimes: exact version, integrity in its lockfile); the files are listed in test/floor-files.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
runtimes=.ci/runtimes
if [ ! -x "$runtimes/node_modules/node-floor/bin/node" ]; then
  npm ci --prefix "$runtimes" --ignore-scripts --no-bin-links --no-audit --no-fund >/dev/null
fi
# First on PATH, so that bin/workspace's `env node` and every child process a test starts run on it too.
export PATH="$PWD/$runtimes/node_modules/node-floor/bin:$PATH"
echo "test:floor on Node.js $(node -p process.versions.node), $(command -v node)"
mapfile -t files < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' test/floor-files.txt | grep .)
exec node node_modules/vitest/vitest.mjs run "${files[@]}" "$@"
