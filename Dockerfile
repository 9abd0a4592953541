# The durable agent's worker (and starter) for a real Temporal cluster.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/worker ./worker && CGO_ENABLED=0 go build -o /out/starter ./starter

FROM debian:bookworm-slim
RUN useradd --create-home --uid 10001 agent && mkdir -p /data && chown agent /data
COPY --from=build /out/worker /out/starter /usr/local/bin/
USER agent
ENV DURABLE_AGENT_HOME=/data
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/worker"]
