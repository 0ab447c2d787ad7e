# flagstore in a container: the one-file executable on a slim base, as an unprivileged user, with
# its data on a volume. Build: docker build -t flagstore .   Run: see docs/operations.md, "Deployment".

# Stage one: the executable, made by `npm run build` exactly as test/system/executable.test.ts makes
# and tests it (npm ci also installs the pinned Bun, from the `bun` dev dependency).
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && mkdir -p /out/data && cp dist/flagstore /out/flagstore

# Stage two: the executable alone. It needs glibc only (libc, libm, libpthread, libdl; `flock` is
# called in libc.so.6), so a slim Debian of the same release as stage one is enough.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin flagstore
COPY --from=build /out/flagstore /usr/local/bin/flagstore
# The volume's mount point, owned by the service's user, so that a new named volume is writable.
COPY --from=build --chown=10001:10001 /out/data /data
ENV DATA_DIR=/data \
    PORT=4242 \
    HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 4242
USER 10001:10001
# SIGTERM (docker stop) stops it gracefully: a checkpoint is written and the lock released.
STOPSIGNAL SIGTERM
# There is no curl in the image: the executable asks its own /ready (PORT, HOST and BASE_URI_PATH
# as the server reads them) and exits 0 only on a 200. /ready is 503 while the event log loads.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["/usr/local/bin/flagstore", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/flagstore"]
CMD ["serve"]
