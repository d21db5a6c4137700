# syntax=docker/dockerfile:1
# Hearth's image: `docker build -t hearth .`, then `docker run -p 8080:8080 -v hearth-data:/data hearth`
# (docs/deployment.md, "Docker and compose"). test/api/packaging.test.ts runs these steps as plain commands.

# Build: `npm ci` installs and runs `prepare`, which builds the web client (web/dist) and the server (dist/,
# with the migrated embedded-database template); then the development packages are pruned.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# node-gyp's tools, which the slim image lacks: argon2's prebuilt addon crashes Node 20 when loaded (its install
# step tries it first, then falls back to compiling), so npm ci compiles argon2 from source. Only this stage has
# them: the runtime stage copies the compiled addon, which needs nothing but libstdc++ (already there for node).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY web ./web
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
RUN npm prune --omit=dev --no-audit --no-fund

# Runtime: the build output and the production packages only, run by an unprivileged user.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HEARTH_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
RUN groupadd --system --gid 10001 hearth \
    && useradd --system --uid 10001 --gid hearth --home-dir /data --no-create-home --shell /usr/sbin/nologin hearth \
    && mkdir /data && chown hearth:hearth /data
# Owned by root and read-only to the server: only /data is writable.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
# A numeric user, so an orchestrator can check it is not root without reading /etc/passwd.
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
# Liveness only (/_health touches nothing); load balancers should use /_ready. Node's fetch: no curl in slim.
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/_health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node is the container's process itself (no npm or shell in between): `docker stop`'s SIGTERM reaches the
# server, which finishes in-flight requests, tells gateway clients to reconnect and exits.
CMD ["node", "dist/main.js"]
