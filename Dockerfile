# The durable agent's cluster worker (cmd/worker-cluster: no embedded
# Temporal server or Web UI linked in) and the starter, for a real
# Temporal cluster (docker-compose.yml).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/worker ./cmd/worker-cluster && CGO_ENABLED=0 go build -trimpath -o /out/starter ./starter

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates bubblewrap && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 agent && mkdir -p /data /workspace && chown agent /data /workspace
COPY --from=build /out/worker /out/starter /usr/local/bin/
USER agent
ENV DURABLE_AGENT_HOME=/data
# /workspace is where sessions' tools work: the starter's working
# directory (a new session's workspace is the starter's current
# directory) and a directory every worker container has. Both paths are
# volumes of each container's own: `docker compose up --scale worker=3`
# gives every replica its own data and workspaces, nothing shared.
WORKDIR /workspace
VOLUME ["/data", "/workspace"]
ENTRYPOINT ["/usr/local/bin/worker"]
