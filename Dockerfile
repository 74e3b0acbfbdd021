# Switchboard as a container: a Debian bookworm build stage and a slim runtime stage.
#
#   docker build -t switchboard .
#   docker run -p 8080:8080 -v switchboard-data:/var/lib/switchboard \
#     -v /etc/switchboard/switchboard.toml:/etc/switchboard/switchboard.toml:ro \
#     -e SWITCHBOARD_CONFIG=/etc/switchboard/switchboard.toml switchboard
#
# Without SWITCHBOARD_CONFIG the embedded demo configuration is served (docs/operations.md).

FROM rust:1-bookworm AS build
WORKDIR /src
# The manifest names the test binary and the ceiling example, so their sources come along; only the
# server binary is built.
COPY Cargo.toml Cargo.lock ./
COPY storage storage
COPY actors actors
COPY src src
COPY config config
COPY benches benches
COPY tests tests
RUN cargo build --release --locked --bin switchboard \
    && cp target/release/switchboard /usr/local/bin/switchboard

FROM debian:bookworm-slim
# TLS roots (webpki), time zones (chrono-tz) and libphonenumber's metadata are compiled in: the runtime
# needs no package beyond the base image, not even curl (the health check is a subcommand).
RUN groupadd --system --gid 10001 switchboard \
    && useradd --system --uid 10001 --gid switchboard --home-dir /var/lib/switchboard \
       --no-create-home --shell /usr/sbin/nologin switchboard \
    && mkdir -p /var/lib/switchboard \
    && chown switchboard:switchboard /var/lib/switchboard \
    && chmod 0700 /var/lib/switchboard
COPY --from=build /usr/local/bin/switchboard /usr/local/bin/switchboard
ENV SWITCHBOARD_BIND=0.0.0.0:8080 \
    SWITCHBOARD_DATA_DIR=/var/lib/switchboard
VOLUME ["/var/lib/switchboard"]
WORKDIR /var/lib/switchboard
USER switchboard:switchboard
EXPOSE 8080
# /readyz answers 200 once stored work is recovered; a large store takes a while to open.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
    CMD ["/usr/local/bin/switchboard", "healthcheck"]
# SIGTERM is the graceful stop: in-flight HTTP requests finish and the store is flushed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/switchboard"]
CMD ["serve"]
