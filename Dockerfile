# syntax=docker/dockerfile:1
#
# The HAADE image: every pipeline binary (each main package under ./pipelines)
# and Beam's Go worker boot program, static linux/amd64, on distroless.
#
#   /opt/haade/bronze      the bronze pipeline; also the --worker_binary the
#                          Flink submit Job stages, so workers run this build
#   /opt/haade/mkbucket    creates the warehouse bucket (the k8s bucket Job)
#   /opt/haade/<pipeline>  every other ./pipelines/* main
#                          (measuring tools, the benchmark among them, live
#                          under ./testing and are not in the image)
#   /opt/haade/boot        Beam's Go SDK boot program (go/container); on
#                          Kubernetes it runs as `boot --worker_pool` on port
#                          50000, a sidecar of each Flink TaskManager
#
# Base images are pinned by tag and digest. To bump one, change both, e.g.
# `docker buildx imagetools inspect golang:1.26.8-bookworm` gives the digest.
# -ldflags=-w drops DWARF (about 15% of bronze) but keeps the ELF symbol
# table: never add -s, Beam's Go worker resolves functions through it
# (core/util/symtab).

# The base images are build arguments whose defaults are the pinned public
# images; testing/cluster/images.sh passes images it builds itself (no
# registry is reachable there).
ARG GO_IMAGE=golang:1.26.8-bookworm@sha256:dc9ad6c05acc7a88e5b71bde60a5fe3bd4b9f0db209011711b464107438a8107
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab

FROM ${GO_IMAGE} AS build
# Where `go mod download` finds modules; unset, Go's default proxy.
ARG GOPROXY
WORKDIR /src
ENV CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# Modules first, so a source edit does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Boot is built from the same go.mod, so it is always the Beam version the
# pipelines link (v2.77.0 today).
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags=-w -o /out/ ./pipelines/... && \
    go build -trimpath -ldflags=-w -o /out/boot github.com/apache/beam/sdks/v2/go/container

FROM ${RUNTIME_IMAGE}
COPY --from=build /out/ /opt/haade/
# distroless "nonroot": uid/gid 65532. Kubernetes manifests set the same.
USER 65532:65532
WORKDIR /tmp
# 9102: Prometheus metrics of a pipeline; 50000: the Beam worker pool.
EXPOSE 9102 50000
ENTRYPOINT ["/opt/haade/bronze"]
