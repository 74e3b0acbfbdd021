//! The ceiling server of `scripts/bench`: what actix-web and sled alone do on this machine, with nothing of
//! Switchboard in between. Switchboard's figures are printed as ratios to these two endpoints:
//!
//! - `GET /plain`: a plain JSON handler (a small serialized struct, no store read);
//! - `POST /create`: parses the same create body Switchboard gets, inserts it under a fresh id and answers
//!   only after a flush that began after the insert (group commit: concurrent POSTs share one fsync).
//!
//! Usage: `ceiling <bind address> <data dir>`. Built as an example so CI compiles it but never runs it.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};

use actix_web::{web, App, HttpResponse, HttpServer};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// The create body, parsed as strictly as Switchboard's intake reads it (typed fields, string inputs).
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Create {
    schema_id: String,
    internal_id: Option<String>,
    internal_tag: Option<String>,
    webhook_url: Option<String>,
    inputs: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Created<'a> {
    request_id: String,
    internal_id: Option<&'a str>,
}

#[derive(Serialize)]
struct Plain {
    status: &'static str,
    service: &'static str,
    version: u32,
}

/// Group commit: a writer asks for a flush that begins after its write and waits for it; one thread
/// flushes in a loop, so every writer that arrived during a flush shares the next one.
struct GroupCommit {
    /// Number of the next flush to begin, and whether a writer is waiting for it.
    next: Mutex<(u64, bool)>,
    wake: Condvar,
    /// Number of the last flush completed.
    done: watch::Sender<u64>,
}

impl GroupCommit {
    fn start(db: sled::Db) -> Arc<GroupCommit> {
        let commit = Arc::new(GroupCommit {
            next: Mutex::new((1, false)),
            wake: Condvar::new(),
            done: watch::channel(0).0,
        });
        let flusher = Arc::clone(&commit);
        std::thread::spawn(move || loop {
            let number = {
                let mut next = flusher.next.lock().expect("flusher lock");
                while !next.1 {
                    next = flusher.wake.wait(next).expect("flusher lock");
                }
                let number = next.0;
                *next = (number + 1, false);
                number
            };
            db.flush().expect("flush");
            flusher.done.send_replace(number);
        });
        commit
    }

    async fn durable(&self) {
        let target = {
            let mut next = self.next.lock().expect("flusher lock");
            next.1 = true;
            next.0
        };
        self.wake.notify_one();
        let mut done = self.done.subscribe();
        done.wait_for(|&completed| completed >= target)
            .await
            .expect("flusher alive");
    }
}

struct State {
    db: sled::Db,
    requests: sled::Tree,
    commit: Arc<GroupCommit>,
}

async fn plain() -> HttpResponse {
    HttpResponse::Ok().json(Plain {
        status: "ok",
        service: "ceiling",
        version: 1,
    })
}

async fn create(state: web::Data<State>, body: web::Bytes) -> HttpResponse {
    let Ok(create) = serde_json::from_slice::<Create>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let id = match state.db.generate_id() {
        Ok(id) => format!("{id:020}"),
        Err(_) => return HttpResponse::InternalServerError().finish(),
    };
    let value = serde_json::to_vec(&create).expect("serializes");
    if state.requests.insert(id.as_bytes(), value).is_err() {
        return HttpResponse::InternalServerError().finish();
    }
    state.commit.durable().await;
    HttpResponse::Ok().json(Created {
        request_id: id,
        internal_id: create.internal_id.as_deref(),
    })
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(bind), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: ceiling <bind address> <data dir>");
        std::process::exit(2);
    };
    let db = sled::Config::new()
        .path(dir)
        .flush_every_ms(None)
        .cache_capacity(64 << 20)
        .open()
        .map_err(std::io::Error::other)?;
    let requests = db.open_tree("requests").map_err(std::io::Error::other)?;
    let state = web::Data::new(State {
        commit: GroupCommit::start(db.clone()),
        db,
        requests,
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .route("/plain", web::get().to(plain))
            .route("/create", web::post().to(create))
    })
    .bind(&bind)?;
    println!("ceiling listening on http://{bind}");
    server.run().await
}
