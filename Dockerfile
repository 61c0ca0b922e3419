# Build stage: the same commands as README (npm ci brings the pinned Bun; the build compiles ./agentd).
# .dockerignore keeps the host's node_modules, .agentd (token, db) and binary out of `COPY . .`.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Run stage: the compiled binary alone, as a non-root user, under tini as PID 1 (it reaps the
# commands the agent runs and forwards SIGTERM to the supervisor).
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates procps tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /home/agentd --uid 10001 agentd \
 && install -d -o root -g root -m 0755 /var/lib/agentd \
 && install -d -o agentd -g agentd -m 0700 /var/lib/agentd/data
COPY --from=build /src/agentd /usr/local/bin/agentd
COPY deploy/docker/agentd.jsonc /etc/agentd/agentd.jsonc
USER agentd
# The data dir's parent is root's: agentd can then hide the store and token from its commands (Landlock).
WORKDIR /home/agentd
ENV AGENTD_DATA_DIR=/var/lib/agentd/data \
    AGENTD_CONFIG=/etc/agentd/agentd.jsonc
# The store, the token and the logs: keep them across containers.
VOLUME ["/var/lib/agentd/data"]
EXPOSE 7070
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/agentd", "health", "--self"]
# SIGTERM drains: the shipped config drains for 8 s within a 9 s grace, under Docker's 10 s stop
# timeout. A longer drain in your config needs `docker run --stop-timeout` above it.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/agentd"]
CMD ["serve"]
