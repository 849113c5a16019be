# Workspace Service: one image for every process (serve, worker, migrate, the CLI).
#   docker build -t workspace-service .
#   docker run -p 3000:3000 -v workspace-data:/data workspace-service
# Behind a TLS-inspecting proxy: --build-arg EXTRA_CA_CERTS="$(cat proxy-ca.pem)" (build stage only).
# See docs/deployment.md ("Container image").

# ---- build: compile TypeScript and the native SQLite driver; none of these tools reach the final image ----
FROM debian:trixie-slim AS build
ARG EXTRA_CA_CERTS=""
ENV DEBIAN_FRONTEND=noninteractive
# Debian's Node.js 20 (security-supported by Debian) and its headers, so node-gyp builds better-sqlite3
# against the very runtime of the final stage without downloading anything.
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates nodejs npm libnode-dev python3 make g++; \
    if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/build-extra.crt; update-ca-certificates; fi; \
    rm -rf /var/lib/apt/lists/*
ENV npm_config_cafile=/etc/ssl/certs/ca-certificates.crt \
    npm_config_nodedir=/usr \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: `prepare` needs the sources (copied below), and the native build happens once, after pruning.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json
# Production dependencies only, then the one native module, built from source against Debian's Node.js
# (build_from_source: prebuild-install would try to download a prebuilt binary).
RUN npm prune --omit=dev --ignore-scripts \
 && npm_config_build_from_source=true npm rebuild better-sqlite3 \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
# What the runtime never reads: the driver's C sources and objects, type declarations, maps, docs, tests.
RUN rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src node_modules/better-sqlite3/build/Release/obj* \
           node_modules/better-sqlite3/build/Release/.deps node_modules/better-sqlite3/build/deps \
           node_modules/better-sqlite3/build/Release/test_extension.node \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \
           -o -name '*.markdown' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name 'CHANGELOG*' \) -delete \
 && find dist -name '*.d.ts' -delete \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

# ---- the image ----
FROM debian:trixie-slim
ENV DEBIAN_FRONTEND=noninteractive
# nodejs (no npm, no headers), tini as PID 1 (signals forwarded, zombies reaped), CAs for https webhooks.
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends nodejs tini ca-certificates; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /usr/share/doc/* /usr/share/man/*; \
    groupadd --system --gid 10001 workspace; \
    useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin workspace; \
    mkdir -p /data; chown workspace:workspace /data; chmod 0750 /data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
COPY bin ./bin
COPY public ./public
RUN ln -s /app/bin/workspace /usr/local/bin/workspace
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
