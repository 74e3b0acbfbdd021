//! The test harness: a real Switchboard on a random port with its own data directory, and the one client
//! of it ([`Api`], one helper per endpoint). `spawn_app` runs it in this process; `BinaryServer` runs the
//! built binary, for tests that need a real restart, a signal or a start-up failure. Both dereference to
//! their [`Api`].

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use reqwest::Response;
use serde_json::Value;
use switchboard::configuration::{self, Overrides, DEFAULT_CONFIG};
use switchboard::startup::Application;
use switchboard::state::AppState;
use switchboard_storage::EngineChoice;
use tempfile::TempDir;

mod api;
mod database;
mod engine;
pub use api::{Api, TERMINAL, WAIT_LIMIT};
pub use database::{admin_query, database_name};
pub(crate) use engine::sled_only;
pub use engine::{on_postgres, open_store, skip_on_postgres};

pub const LIVE_KEY: &str = "sk_live_demo_7Qh2m9XcP4";
pub const LIVE_SECRET: &str = "demo-live-secret-change-me";
pub const SANDBOX_KEY: &str = "sk_test_demo_3Vn8kR1wZ6";
pub const SANDBOX_SECRET: &str = "demo-sandbox-secret-change-me";
pub const ADMIN_TOKEN: &str = "dev-admin-token";
/// The manual clock's first instant in tests: a Monday.
pub const START: &str = "2026-11-23T14:00:00Z";

/// Test configuration: the embedded default, with a manual clock and test-friendly edits on top.
#[derive(Clone)]
pub struct TestConfig {
    table: toml::Table,
}

impl Default for TestConfig {
    fn default() -> TestConfig {
        let mut config = TestConfig {
            table: DEFAULT_CONFIG.parse().unwrap(),
        };
        // Intake tests read requests right after creating them; with dispatch paused nothing moves them on.
        // Orchestration tests turn it back on with `TestConfig::dispatching`.
        // Links then keep one known origin whatever port a test binds; tests of the derived default
        // remove it.
        config
            .set("server.public_url", "http://127.0.0.1:8080")
            .set("clock.mode", "manual")
            .set("clock.start", START)
            .set("server.fault_injection", true)
            .set("dialer.paused", true);
        config
    }
}

impl TestConfig {
    /// Sets a dotted key (tables are created as needed).
    pub fn set(&mut self, dotted: &str, value: impl Into<toml::Value>) -> &mut TestConfig {
        let mut keys: Vec<&str> = dotted.split('.').collect();
        let last = keys.pop().unwrap();
        let mut table = &mut self.table;
        for key in keys {
            table = table
                .entry(key)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .unwrap();
        }
        table.insert(last.to_owned(), value.into());
        self
    }

    /// Requests run as soon as their day comes, with simulated time sped up so calls take milliseconds.
    pub fn dispatching(&mut self) -> &mut TestConfig {
        self.set("dialer.paused", false)
            .set("simulation.time_scale", 100_000.0)
    }

    /// Removes a dotted key.
    pub fn remove(&mut self, dotted: &str) -> &mut TestConfig {
        let mut keys: Vec<&str> = dotted.split('.').collect();
        let last = keys.pop().unwrap();
        let mut table = &mut self.table;
        for key in keys {
            table = table.get_mut(key).unwrap().as_table_mut().unwrap();
        }
        table.remove(last);
        self
    }

    /// Mutable access to the demo account (`[[accounts]]` entry 0).
    pub fn demo_account(&mut self) -> &mut toml::Table {
        self.table["accounts"].as_array_mut().unwrap()[0]
            .as_table_mut()
            .unwrap()
    }

    /// Sets the demo account's features.
    pub fn features(&mut self, features: &[&str]) -> &mut TestConfig {
        let list = features
            .iter()
            .map(|f| toml::Value::String((*f).to_owned()))
            .collect::<Vec<_>>();
        self.demo_account()
            .insert("features".into(), toml::Value::Array(list));
        self
    }

    /// The whole table, for edits the helpers do not cover.
    pub fn table_mut(&mut self) -> &mut toml::Table {
        &mut self.table
    }

    /// Appends a table, written as TOML text, to the array of tables `array` (e.g. `schemas`).
    pub fn push(&mut self, array: &str, item: &str) -> &mut TestConfig {
        let item: toml::Table = item.parse().unwrap();
        self.table
            .entry(array)
            .or_insert_with(|| toml::Value::Array(vec![]))
            .as_array_mut()
            .unwrap()
            .push(toml::Value::Table(item));
        self
    }

    /// The TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.table).unwrap()
    }

    /// The configuration one new server of this run starts with: on a fresh database of its own when the
    /// suite runs on PostgreSQL (see `helpers/engine.rs`).
    pub fn for_server(&self) -> TestConfig {
        engine::on_test_engine(self, switchboard_storage::fresh_postgres_database)
    }
}

/// A Switchboard running in this process.
pub struct TestApp {
    pub api: Api,
    pub state: actix_web::web::Data<AppState>,
    handle: ServerHandle,
    // Held for its Drop: the data directory lives as long as the app.
    _data_dir: TempDir,
    /// On the PostgreSQL run, the app's database, dropped once the app is.
    database: Option<String>,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(&TestConfig::default()).await
}

pub async fn spawn_app_with(config: &TestConfig) -> TestApp {
    spawn_app_on(config, "127.0.0.1:0").await
}

/// A loopback port free at the time of the call: for servers whose `server.public_url` must be known
/// before they start (platform fakes post events to it).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loopback port where nothing listens, kept for the caller until the socket drops: bound and never
/// listening, so every connection to it is refused, and no server the suite starts meanwhile can take
/// it (as it can take a port that was only freed).
pub fn closed_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

/// [`spawn_app_with`], listening on `bind`.
pub async fn spawn_app_on(config: &TestConfig, bind: &str) -> TestApp {
    let data_dir = tempfile::tempdir().unwrap();
    let overrides = Overrides {
        bind: Some(bind.into()),
        data_dir: Some(data_dir.path().to_owned()),
        ..Overrides::default()
    };
    let (config, database) = engine::for_app(config);
    let settings =
        configuration::from_toml_str(&config.to_toml(), "test config", &overrides).unwrap();
    let app = Application::build(settings)
        .await
        .expect("application builds");
    let address = format!("http://127.0.0.1:{}", app.port());
    let handle = app.handle();
    let state = app.state();
    actix_web::rt::spawn(app.run_until_stopped());
    TestApp {
        api: Api::at(address),
        state,
        handle,
        _data_dir: data_dir,
        database,
    }
}

/// How long the server keeps an idle connection open: actix-web's default, which Switchboard keeps (see
/// docs/operations.md, *Connections*).
pub const SERVER_KEEP_ALIVE: Duration = Duration::from_secs(5);

/// How long the test client keeps an idle connection for reuse: clearly shorter than
/// [`SERVER_KEEP_ALIVE`], so it never sends a request on a connection the server is closing at that moment
/// (reqwest's `IncompleteMessage`; its default of 90 s keeps connections far longer than the server).
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(2);

/// The HTTP client of every test: no redirects followed, a 30 s bound on each call, and idle connections
/// dropped after [`POOL_IDLE_TIMEOUT`].
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build()
        .unwrap()
}

impl std::ops::Deref for TestApp {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Without a stop the server would outlive the test's System and keep the port.
        drop(self.handle.stop(false));
        if let Some(url) = self.database.take() {
            engine::drop_database_later(url);
        }
        keep_open_if_sled(&self.state);
    }
}

/// Keeps the store of a server dropped before its stop open to the end of the run when it is sled's, as it
/// stayed while the server's actor threads outlived it: its closing flush holds sled 0.34's process-wide
/// lock while it waits for its log, and deadlocked there against the transactions of the tests still
/// running. A PostgreSQL store closes, which ends its connections.
pub fn keep_open_if_sled(state: &actix_web::web::Data<AppState>) {
    if matches!(state.settings.storage_engine, EngineChoice::Sled) {
        std::mem::forget(state.clone());
    }
}

/// Status and parsed JSON body of a response.
pub async fn status_and_json(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("body is not JSON: {text:?}"));
    (status, body)
}

/// The built `switchboard` binary, started as a child process.
pub struct BinaryServer {
    pub child: Child,
    pub api: Api,
}

impl std::ops::Deref for BinaryServer {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

impl BinaryServer {
    /// Starts the binary with `config_path` and `data_dir` and waits for its "listening on" line.
    pub fn start(config_path: &Path, data_dir: &Path) -> BinaryServer {
        BinaryServer::start_on(config_path, data_dir, "127.0.0.1:0")
    }

    /// [`BinaryServer::start`], listening on `bind`.
    pub fn start_on(config_path: &Path, data_dir: &Path, bind: &str) -> BinaryServer {
        BinaryServer::start_with_env(config_path, data_dir, &[("SWITCHBOARD_BIND", bind)])
    }

    /// [`BinaryServer::start`] with `env` set on top (a master key, another bind). No master key is
    /// inherited from the environment the tests run in.
    pub fn start_with_env(
        config_path: &Path,
        data_dir: &Path,
        env: &[(&str, &str)],
    ) -> BinaryServer {
        BinaryServer::spawn(config_path, data_dir, env, Stdio::inherit())
    }

    /// [`BinaryServer::start_with_env`], its log (stderr) read to its end by a thread that answers it
    /// once the server has exited.
    pub fn start_logged(
        config_path: &Path,
        data_dir: &Path,
        env: &[(&str, &str)],
    ) -> (BinaryServer, std::thread::JoinHandle<String>) {
        let mut server = BinaryServer::spawn(config_path, data_dir, env, Stdio::piped());
        let log = drain_stderr(&mut server.child);
        (server, log)
    }

    fn spawn(
        config_path: &Path,
        data_dir: &Path,
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> BinaryServer {
        engine::database_of_data_dir(config_path, data_dir);
        let mut command = Command::new(binary());
        command
            .args(["serve", "--config"])
            .arg(config_path)
            .env_remove("SWITCHBOARD_MASTER_KEY")
            .env("SWITCHBOARD_BIND", "127.0.0.1:0")
            .env("SWITCHBOARD_DATA_DIR", data_dir)
            .env("RUST_LOG", "warn");
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        // Keep draining, so a later line never meets a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let address = first
            .trim()
            .strip_prefix("Switchboard listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_owned();
        if engine::switched(config_path) {
            engine::wait_runs_requests(&address);
        }
        BinaryServer {
            child,
            api: Api::at(address),
        }
    }

    /// [`BinaryServer::start`], then waits until `/readyz` answers 200 (start-up recovery done).
    pub async fn start_ready(config_path: &Path, data_dir: &Path) -> BinaryServer {
        let server = BinaryServer::start(config_path, data_dir);
        server.wait_ready().await;
        server
    }

    /// The server's process id (for measurements of its memory).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// SIGTERM, without waiting for the exit.
    pub fn ask_to_stop(&self) {
        self.signal("-TERM");
    }

    /// SIGINT (Ctrl-C), without waiting for the exit.
    pub fn interrupt(&self) {
        self.signal("-INT");
    }

    /// SIGTERM, then the exit code.
    pub fn terminate(mut self) -> Option<i32> {
        self.signal("-TERM");
        self.child.wait().unwrap().code()
    }

    /// kill -9: no chance to flush anything.
    pub fn kill_hard(mut self) {
        self.signal("-KILL");
        let _ = self.child.wait();
    }
}

impl Drop for BinaryServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a command that is expected to exit on its own; kills it and fails after 10 s.
pub fn run_to_exit(mut command: Command) -> Output {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    output_within(child, Duration::from_secs(10)).unwrap_or_else(|output| {
        panic!(
            "the binary did not exit; stdout: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// A thread that reads the child's stderr to its end, so the child never blocks on a full pipe (64 KiB).
pub fn drain_stderr(child: &mut Child) -> std::thread::JoinHandle<String> {
    let mut stream = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut stream, &mut stderr).unwrap();
        stderr
    })
}

/// The child's output once it exits, or, past `limit`, what it wrote before it was killed (`Err`). Both
/// pipes are read while it runs: one left unread fills at 64 KiB and blocks the child until the limit.
pub fn output_within(child: Child, limit: Duration) -> Result<Output, Output> {
    let pid = child.id().to_string();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output().unwrap()));
    match receiver.recv_timeout(limit) {
        Ok(output) => Ok(output),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            Err(receiver.recv().unwrap())
        }
    }
}

/// Writes a test config into `dir` and returns its path. On the PostgreSQL run it names the database a
/// config written there before named, else a fresh one (see `helpers/engine.rs`).
pub fn write_config(dir: &Path, config: &TestConfig) -> PathBuf {
    let text = engine::config_file_text(dir, config);
    let path = dir.join("switchboard.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Creates the demo `vob-basic` request used by the dialer tests (Aetna, a given phone number) and returns
/// its `requestId`.
pub async fn create_vob(api: &Api, token: &str) -> String {
    let body = serde_json::json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": "W123456789", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890"
        }
    });
    api.create_request(token, &body).await
}
