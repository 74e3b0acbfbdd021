//! The binary with its whole output captured, and the client calls the PHI tests make on it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::helpers::{binary, Api, BinaryServer};

/// Every level of Switchboard's crates and of the HTTP stack, everything else at debug. sled's own debug
/// output is left out only because it slows the server down; its messages are about pages, not records.
const LOG_FILTER: &str = "debug,switchboard=trace,switchboard_actors=trace,\
                          switchboard_storage=trace,actix_web=trace,actix_http=trace,\
                          actix_router=trace,reqwest=trace,hyper=trace,hyper_util=trace,sled=info";

/// How the server writes its log lines (`SWITCHBOARD_LOG_FORMAT`).
#[derive(Clone, Copy, Debug)]
pub enum LogFormat {
    Text,
    Json,
}

/// The binary with stdout and stderr captured whole, from the first line to the exit.
pub struct LoggedServer {
    server: BinaryServer,
    log: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

impl LoggedServer {
    pub async fn start(config: &Path, data_dir: &Path, format: LogFormat) -> LoggedServer {
        let mut command = Command::new(binary());
        command
            .args(["serve", "--config"])
            .arg(config)
            .env("SWITCHBOARD_BIND", "127.0.0.1:0")
            .env("SWITCHBOARD_DATA_DIR", data_dir)
            .env("RUST_LOG", LOG_FILTER)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match format {
            LogFormat::Text => command.env_remove("SWITCHBOARD_LOG_FORMAT"),
            LogFormat::Json => command.env("SWITCHBOARD_LOG_FORMAT", "json"),
        };
        let mut child = command.spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = child.stderr.take().unwrap();
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let log = Arc::new(Mutex::new(first.clone()));
        let streams = [Box::new(stdout) as Box<dyn Read + Send>, Box::new(stderr)];
        let readers = streams
            .into_iter()
            .map(|stream| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    // Read to the end whatever the bytes: a reader that stopped early would leave the
                    // server blocked on a full pipe.
                    for line in BufReader::new(stream).split(b'\n').map_while(Result::ok) {
                        let mut log = log.lock().unwrap();
                        log.push_str(&String::from_utf8_lossy(&line));
                        log.push('\n');
                    }
                })
            })
            .collect();
        let Some(address) = first.trim().strip_prefix("Switchboard listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("unexpected first line {first:?}: {}", log.lock().unwrap());
        };
        let address = address.to_owned();
        let server = BinaryServer {
            child,
            api: Api::at(address),
        };
        server.wait_ready().await;
        LoggedServer {
            server,
            log,
            readers,
        }
    }

    /// The client of the server.
    pub fn api(&self) -> Api {
        self.server.api.clone()
    }

    /// SIGTERM, a clean exit, and everything the server wrote until then.
    pub fn stop(self) -> String {
        assert_eq!(self.server.terminate(), Some(0), "a graceful stop");
        // The readers end when the pipes close, so nothing written before the exit is missed.
        for reader in self.readers {
            reader.join().unwrap();
        }
        let log = self.log.lock().unwrap();
        log.clone()
    }
}
