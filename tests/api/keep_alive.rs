//! Keep-alive: the server closes a connection idle for [`SERVER_KEEP_ALIVE`], and the test client's pool
//! drops idle connections well before that ([`POOL_IDLE_TIMEOUT`]), so it never sends a request on a
//! connection the server is closing at that very moment (reqwest's `IncompleteMessage`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::helpers::{client, spawn_app, POOL_IDLE_TIMEOUT, SERVER_KEEP_ALIVE};

/// Sends `GET /healthz` on `stream` and reads the whole answer (its body is small and sized).
fn healthz(stream: &mut TcpStream) -> String {
    write!(stream, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
        head.push_str(&line);
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    head + &String::from_utf8(body).unwrap()
}

#[actix_web::test]
async fn the_server_closes_a_connection_idle_for_its_keep_alive_and_not_before() {
    let app = spawn_app().await;
    let address = app.address.trim_start_matches("http://").to_owned();
    let closed_after = actix_web::rt::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(&address).unwrap();
        assert!(healthz(&mut stream).starts_with("HTTP/1.1 200"));
        // Reused after an idle second: still open.
        std::thread::sleep(Duration::from_secs(1));
        assert!(healthz(&mut stream).starts_with("HTTP/1.1 200"));
        let idle_since = Instant::now();
        stream
            .set_read_timeout(Some(SERVER_KEEP_ALIVE * 3))
            .unwrap();
        let read = stream.read(&mut [0; 16]).unwrap();
        assert_eq!(read, 0, "the server closes the connection, saying nothing");
        idle_since.elapsed()
    })
    .await
    .unwrap();
    // actix-web reckons its deadline from a clock it refreshes every half second, so a connection can go
    // up to that much early; what matters is that it outlives the client pool's idle timeout by far.
    assert!(
        closed_after >= SERVER_KEEP_ALIVE - Duration::from_secs(1)
            && closed_after < SERVER_KEEP_ALIVE + Duration::from_secs(3),
        "closed after {closed_after:?} idle, the keep-alive is {SERVER_KEEP_ALIVE:?}"
    );
    assert!(POOL_IDLE_TIMEOUT * 2 <= SERVER_KEEP_ALIVE);
}

/// A server that, like any keep-alive server whose timer fires just as a request arrives, closes a
/// connection idle for [`SERVER_KEEP_ALIVE`] without answering the request sent on it.
fn racing_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = stream.unwrap();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let mut answered: Option<Instant> = None;
                loop {
                    // One bodiless request head.
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    if answered.is_some_and(|at| at.elapsed() >= SERVER_KEEP_ALIVE) {
                        return;
                    }
                    writer
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                        .unwrap();
                    answered = Some(Instant::now());
                }
            });
        }
    });
    address
}

#[actix_web::test]
async fn the_test_client_never_reuses_a_connection_idle_for_the_servers_keep_alive() {
    let base = racing_server();
    let http = client();
    let first = http.get(format!("{base}/a")).send().await.unwrap();
    assert_eq!(first.text().await.unwrap(), "ok");

    actix_web::rt::time::sleep(SERVER_KEEP_ALIVE + Duration::from_millis(100)).await;

    let second = http
        .get(format!("{base}/b"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("a stale pooled connection was reused: {e:?}"));
    assert_eq!(second.text().await.unwrap(), "ok");
}
