# Workspace Service: one image for every process (serve, worker, migrate, the CLI).
#   docker build -t workspace-service .
#   docker run -p 3000:3000 -v workspace-data:/data workspace-service
# Behind a TLS-inspecting proxy: --build-arg EXTRA_CA_CERTS="$(cat proxy-ca.pem)" (build stage only).
# See docs/deployment.md ("Container image"): how the Node.js version moves, and the variant built from
# node:24-trixie-slim where a registry is reachable.

# ---- build: install the locked packages, compile TypeScript; nothing is built from source ----
FROM debian:trixie-slim AS build
ARG EXTRA_CA_CERTS=""
ENV DEBIAN_FRONTEND=noninteractive
# Debian's npm (on Debian's Node.js 20) only runs the package manager in this stage: no compiler and no
# headers are installed, since better-sqlite3 13 ships its binaries inside the npm package.
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates npm; \
    if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/build-extra.crt; update-ca-certificates; fi; \
    rm -rf /var/lib/apt/lists/*
ENV npm_config_cafile=/etc/ssl/certs/ca-certificates.crt \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_engine_strict=false
# The runtime: the official Node.js binary from the npm package node-linux-<arch>, at the exact version and
# integrity docker/node/package-lock.json pins (the same version as the `node` dev dependency that runs
# `npm start` and the tests; `npm run node:move -- <version>` moves both).
WORKDIR /runtime
COPY docker/node/package.json docker/node/package-lock.json ./
RUN set -eu; \
    npm ci --ignore-scripts; \
    arch=$(dpkg --print-architecture | sed 's/amd64/x64/'); \
    mkdir -p /out; cp "node_modules/node-linux-$arch/bin/node" /out/node; \
    rm -rf node_modules; \
    /out/node -e "console.log('image runtime: Node.js ' + process.version)"
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: `prepare` needs the sources (copied below), and the `node` dev dependency's own install
# script would fetch a second copy of the runtime that the image takes from /out instead.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN /out/node node_modules/typescript/bin/tsc -p tsconfig.build.json
# Production dependencies only, then what the runtime never reads: the driver's C sources and the binaries
# for other platforms, the addon headers, type declarations, maps, docs, tests.
RUN set -eu; \
    npm prune --omit=dev --ignore-scripts; \
    bsq=node_modules/better-sqlite3; \
    platform="linux-$(/out/node -p process.arch)"; \
    rm -rf "$bsq/deps" "$bsq/src" "$bsq/binding.gyp" node_modules/node-addon-api; \
    find "$bsq/prebuilds" -type f ! -name "$platform.node" -delete; \
    find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \
         -o -name '*.markdown' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name 'CHANGELOG*' \) -delete; \
    find dist -name '*.d.ts' -delete; \
    /out/node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

# ---- the image ----
FROM debian:trixie-slim
ENV DEBIAN_FRONTEND=noninteractive
# tini as PID 1 (signals forwarded, zombies reaped), CAs for https webhooks; Node.js is the binary below.
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends tini ca-certificates; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /usr/share/doc/* /usr/share/man/*; \
    groupadd --system --gid 10001 workspace; \
    useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin workspace; \
    mkdir -p /data; chown workspace:workspace /data; chmod 0750 /data
COPY --from=build /out/node /usr/local/bin/node
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
COPY bin ./bin
COPY public ./public
RUN ln -s /app/bin/workspace /usr/local/bin/workspace && workspace --help >/dev/null
# Listen on every interface inside the container; data, mail outbox and exports under the volume.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 3000
USER 10001:10001
# No curl in the image: the CLI asks this container's /readyz itself.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["workspace", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "workspace"]
CMD ["serve"]
