//! The `switchboard` binary: parse the command line, load configuration, serve.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use switchboard::cli::{Cli, Command, TraceArgs};
use switchboard::configuration::{self, ConfigSource, Settings};
use switchboard::startup::{Application, StoppedStandingBy};
use switchboard::telemetry;
use switchboard::trace::TraceTarget;
use switchboard_storage::{EngineChoice, Store};

/// mimalloc instead of glibc's malloc: the request path allocates many small, short-lived buffers, and
/// glibc's bin upkeep (consolidation, unlinking) was a sixth of the server core's samples under create load.
/// Built without transparent huge pages, which kept whole 2 MiB pages resident for a few live objects.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Returns to the system what the store's recovery allocated and freed, before the server declares itself
/// ready. Without it, a restart on 1,000,000 stored requests left 176 to 183 MiB resident in two of seven
/// starts (143 to 144 MiB in the others): memory freed during recovery that mimalloc kept. With it,
/// 143 to 144 MiB in eleven starts of eleven.
///
/// This collection is why the purge delay keeps mimalloc's default of a second: a shorter one would also
/// return recovery's memory, but makes the store's flusher fault freed pages back in all the time under
/// load (8% of the burst's CPU at 10 ms).
fn release_recovery_memory() {
    // SAFETY: a forced collection of mimalloc's heaps; it only frees memory no allocation refers to.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        Some(Command::Trace(args)) => return trace(args),
        Some(Command::Keys(command)) => return switchboard::keys::run(command),
        Some(Command::Backup(args)) => return switchboard::backup::run(args),
        Some(Command::Migrate(args)) => return switchboard::migrate::run(&args),
        Some(Command::Healthcheck(args)) => return switchboard::healthcheck::run(&args.address),
        None => cli.serve,
    };
    let settings = match configuration::load(&args.overrides()) {
        Ok(settings) => settings,
        Err(e) => {
            telemetry::report_fatal(&format!("switchboard: {e}"));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = switchboard::encryption::check_key_file(&settings) {
        telemetry::report_fatal(&format!(
            "switchboard: invalid configuration in {}: {e:#}",
            settings.source
        ));
        return ExitCode::from(2);
    }
    // Before the runtime: the OTLP exporter's client is a blocking one.
    let traces = match telemetry::Traces::start(&settings.telemetry) {
        Ok(traces) => traces,
        Err(e) => {
            telemetry::report_fatal(&format!("switchboard: [telemetry]: {e:#}"));
            return ExitCode::from(2);
        }
    };
    telemetry::init_subscriber_with(std::io::stderr, traces.as_ref());
    let (engine, data_dir, cache_bytes) = (
        settings.storage_engine.clone(),
        settings.server.data_dir.clone(),
        settings.storage_cache_bytes,
    );
    let system = actix_web::rt::System::new();
    let served = system.block_on(serve(settings));
    drop_in_runtime_context(system);
    if let Some(traces) = traces {
        traces.shutdown();
    }
    match served {
        Ok(()) => {
            prepare_next_start(&engine, &data_dir, cache_bytes);
            ExitCode::SUCCESS
        }
        Err(e) => {
            telemetry::report_fatal(&format!("switchboard: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// Drops the runtime with its tokio context entered. Actors still alive at the end of `main` (request,
/// step and call actors mid-call, the dispatcher with rounds in flight) are dropped with it, and actix
/// polls each dropped actor one last time; a timer created in that poll (an interval, a dialer's sleep, an
/// HTTP timeout) needs the runtime's context, or it panics ("there is no reactor running").
fn drop_in_runtime_context(system: actix_web::rt::SystemRunner) {
    let handle = system.runtime().tokio_runtime().handle().clone();
    let _context = handle.enter();
    drop(system);
}

/// After a graceful stop: whatever makes the engine's next start quick (a recovery snapshot on sled). Not
/// fatal: without it the next start is only slower.
fn prepare_next_start(engine: &EngineChoice, data_dir: &Path, cache_bytes: u64) {
    let started = Instant::now();
    match Store::prepare_next_start(engine, data_dir, cache_bytes, Duration::from_secs(5)) {
        Ok(false) => {}
        Ok(true) => tracing::info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "recovery snapshot written"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "no recovery snapshot; the next start replays the log")
        }
    }
}

fn trace(args: TraceArgs) -> ExitCode {
    let target = TraceTarget {
        base_url: args.base_url,
        token: args.token,
        key: args.key,
        secret: args.secret,
        product_word: args.product_word,
    };
    match actix_web::rt::System::new()
        .block_on(switchboard::trace::trace(&target, &args.request_id))
    {
        Ok(tree) => {
            print!("{tree}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("switchboard trace: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    let demo = settings.source == ConfigSource::Embedded;
    let host = settings.server.bind.ip();
    let scheme = if settings.server.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let credentials: Vec<String> = settings
        .accounts
        .iter()
        .flat_map(|a| {
            a.credentials.iter().flatten().map(move |c| {
                format!(
                    "  account {:<10} {:<10} key={}  secret={}",
                    a.id.as_deref().unwrap_or_default(),
                    c.environment.as_str(),
                    c.key,
                    c.secret.expose()
                )
            })
        })
        .collect();
    let admin = settings
        .server
        .admin_token
        .as_ref()
        .map(|t| t.expose().to_owned());
    let listening = move |port: u16| {
        // The first stdout line is the contract with scripts and tests that start the binary.
        println!("Switchboard listening on {scheme}://{host}:{port}");
        if demo {
            println!("Demo credentials (embedded config/default.toml, local use only):");
            for line in &credentials {
                println!("{line}");
            }
            if let Some(admin) = admin {
                println!("  admin token: {admin}");
            }
        }
        println!("Console: {scheme}://{host}:{port}/console  (API reference: /console/reference)");
    };
    let application =
        match Application::build_with(settings, release_recovery_memory, listening).await {
            Ok(application) => application,
            Err(e) if e.is::<StoppedStandingBy>() => {
                tracing::info!("switchboard stopped while standing by");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
    application.run_until_stopped().await
}
