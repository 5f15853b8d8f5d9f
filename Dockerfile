# The Assay service. Built by `docker compose up` (see docker-compose.yml).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# npm ci runs the package's prepare step, which finds no sources here yet and builds nothing.
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.validator.json nest-cli.json ./
COPY viewer ./viewer
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
# python3: the spawn helper that starts trial commands with vfork (without it, a Node one that forks).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap git ca-certificates python3 e2fsprogs && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 ASSAY_DATA_DIR=/var/lib/assay
# The service runs as the image's unprivileged `node` user, owner of the data directory (a new
# named volume mounted there inherits that ownership); the code stays root's, read-only to it.
RUN mkdir -p /var/lib/assay && chown node:node /var/lib/assay && chmod 700 /var/lib/assay
USER node
EXPOSE 8080
# No curl in this image: Node's fetch asks the liveness probe on the configured port.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/cli.js", "serve"]
