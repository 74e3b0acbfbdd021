//! The ceiling server of `scripts/bench`: what actix-web and sled alone do on this machine, with nothing of
//! Switchboard in between. Switchboard's figures are printed as ratios to these two endpoints:
//!
//! - `GET /plain`: a plain JSON handler (a small serialized struct, no store read);
//! - `POST /create`: parses the same create body Switchboard gets (one create, or a batch under
//!   `requests`), inserts each under a fresh id and answers only after a flush that began after the
//!   inserts (group commit: concurrent POSTs share one fsync).
//! - `POST /create-indexed`: the same POST stored in Switchboard's layout, with the same key shapes: the
//!   POST's entries as one value under a batch id (Switchboard stores a batch whole), the batch's listing
//!   and due entries, an idempotency key per entry that has an internal id, and the day's booking count;
//!   one insert per key, without a transaction across trees. It prices the stored layout alone: what sled
//!   does when it writes those keys, with nothing of Switchboard's work around it.
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

/// One create, or a batch of them under `requests`, as Switchboard takes them.
#[derive(Deserialize)]
#[serde(untagged)]
enum Body {
    Batch { requests: Vec<Create> },
    One(Create),
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
    indexes: Indexes,
    commit: Arc<GroupCommit>,
}

/// The trees Switchboard writes at every create.
struct Indexes {
    batches: sled::Tree,
    created: sled::Tree,
    internal_ids: sled::Tree,
    due: sled::Tree,
    bookings: sled::Tree,
}

impl Indexes {
    fn open(db: &sled::Db) -> sled::Result<Indexes> {
        Ok(Indexes {
            batches: db.open_tree("batches")?,
            created: db.open_tree("created")?,
            internal_ids: db.open_tree("internal_ids")?,
            due: db.open_tree("due")?,
            bookings: db.open_tree("bookings")?,
        })
    }

    /// Writes one POST's requests (`(id, value, internal id)`) as one batch: the entries whole, the
    /// batch's listing and due entries, the idempotency keys, then the day's booking count.
    /// Switchboard's keys: `account \0 environment \0` scopes them, times are big-endian microseconds.
    fn write(&self, batch: &str, entries: &[(String, Vec<u8>, Option<&str>)]) -> sled::Result<()> {
        let scope: &[u8] = b"demo-account\0production\0";
        let micros = (chrono::Utc::now().timestamp_micros() as u64).to_be_bytes();
        let batch = batch.as_bytes();
        let count = (entries.len() as u32).to_be_bytes();
        let mut whole =
            Vec::with_capacity(entries.iter().map(|(_, value, _)| value.len() + 1).sum());
        for (_, value, _) in entries {
            whole.extend_from_slice(value);
            whole.push(b'\n');
        }
        self.batches.insert(batch, whole)?;
        self.created
            .insert([scope, &micros, batch].concat(), &count)?;
        self.due.insert([&micros, batch].concat(), &count)?;
        for (id, _, internal_id) in entries {
            if let Some(internal_id) = internal_id {
                self.internal_ids
                    .insert([scope, internal_id.as_bytes()].concat(), id.as_bytes())?;
            }
        }
        let booked = entries.len() as u32;
        self.bookings
            .update_and_fetch([scope, b"2026-11-26"].concat(), |count| {
                let count = count.map_or(0, |c| u32::from_be_bytes(c.try_into().unwrap_or([0; 4])));
                Some((count + booked).to_be_bytes().to_vec())
            })?;
        Ok(())
    }
}

async fn plain() -> HttpResponse {
    HttpResponse::Ok().json(Plain {
        status: "ok",
        service: "ceiling",
        version: 1,
    })
}

async fn create(state: web::Data<State>, body: web::Bytes) -> HttpResponse {
    store(state, body, false).await
}

async fn create_indexed(state: web::Data<State>, body: web::Bytes) -> HttpResponse {
    store(state, body, true).await
}

async fn store(state: web::Data<State>, body: web::Bytes, indexed: bool) -> HttpResponse {
    let Ok(body) = serde_json::from_slice::<Body>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let creates = match &body {
        Body::One(create) => std::slice::from_ref(create),
        Body::Batch { requests } => requests.as_slice(),
    };
    let mut entries = Vec::with_capacity(creates.len());
    for create in creates {
        // Switchboard's ids are UUID v7, so its request tree too is written in time order.
        let id = if indexed {
            uuid::Uuid::now_v7().to_string()
        } else {
            match state.db.generate_id() {
                Ok(id) => format!("{id:020}"),
                Err(_) => return HttpResponse::InternalServerError().finish(),
            }
        };
        let value = serde_json::to_vec(create).expect("serializes");
        entries.push((id, value, create.internal_id.as_deref()));
    }
    let written = if indexed {
        // Switchboard gives the entries of one POST one batch id (per day).
        let batch = uuid::Uuid::now_v7().to_string();
        state.indexes.write(&batch, &entries)
    } else {
        entries.iter().try_for_each(|(id, value, _)| {
            state
                .requests
                .insert(id.as_bytes(), value.as_slice())
                .map(drop)
        })
    };
    if written.is_err() {
        return HttpResponse::InternalServerError().finish();
    }
    state.commit.durable().await;
    let created: Vec<Created> = entries
        .iter()
        .map(|(id, _, internal_id)| Created {
            request_id: id.clone(),
            internal_id: *internal_id,
        })
        .collect();
    match body {
        Body::One(_) => HttpResponse::Ok().json(&created[0]),
        Body::Batch { .. } => HttpResponse::Ok().json(serde_json::json!({ "requests": created })),
    }
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
        // scripts/bench gives Switchboard the same page cache (CEILING_CACHE_MB).
        .cache_capacity(64 << 20)
        .open()
        .map_err(std::io::Error::other)?;
    let requests = db.open_tree("requests").map_err(std::io::Error::other)?;
    let indexes = Indexes::open(&db).map_err(std::io::Error::other)?;
    let state = web::Data::new(State {
        commit: GroupCommit::start(db.clone()),
        db,
        requests,
        indexes,
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .route("/plain", web::get().to(plain))
            .route("/create", web::post().to(create))
            .route("/create-indexed", web::post().to(create_indexed))
    })
    .bind(&bind)?;
    println!("ceiling listening on http://{bind}");
    server.run().await
}
