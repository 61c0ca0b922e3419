# Build stage: the same commands as README (npm ci brings the pinned Bun; the build compiles ./agentd).
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Run stage: the compiled binary alone, as a non-root user.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates procps \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /var/lib/agentd --uid 10001 agentd
COPY --from=build /src/agentd /agentd
USER agentd
WORKDIR /var/lib/agentd
ENV AGENTD_DATA_DIR=/var/lib/agentd/data
EXPOSE 7070
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/agentd", "health"]
# Inside a container the port must be reachable from outside: any non-loopback bind requires the
# bearer token from /var/lib/agentd/data/token (the health check reads it from there).
ENTRYPOINT ["/agentd"]
CMD ["serve", "--bind", "0.0.0.0"]
