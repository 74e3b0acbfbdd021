//! `switchboard healthcheck`: asks a server on this machine whether it is ready (`GET /readyz`) and exits 0
//! when it answers 200, 1 otherwise. Made for a container's `HEALTHCHECK`, where the slim runtime image has
//! no curl: plain HTTP/1.0 over a socket, standard library only, a few seconds at most.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

/// How long connecting, sending and reading may each take.
const TIMEOUT: Duration = Duration::from_secs(3);

/// Runs the check against `address` (`host:port`); a wildcard address (`0.0.0.0`, `[::]`), as a server
/// binds in a container, is asked on loopback.
pub fn run(address: &str) -> ExitCode {
    match ready(address) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("switchboard healthcheck: {address}: {reason}");
            ExitCode::FAILURE
        }
    }
}

fn ready(address: &str) -> Result<(), String> {
    let target = loopback_for(address)?;
    let mut stream = TcpStream::connect_timeout(&target, TIMEOUT).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 64];
    let mut read = 0;
    while read < 12 {
        match stream.read(&mut head[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) => return Err(e.to_string()),
        }
    }
    let status_line = String::from_utf8_lossy(&head[..read]);
    let status = status_line.split_whitespace().nth(1).unwrap_or_default();
    if status == "200" {
        Ok(())
    } else {
        Err(format!("/readyz answered {status:?}"))
    }
}

fn loopback_for(address: &str) -> Result<SocketAddr, String> {
    let mut target = address
        .to_socket_addrs()
        .map_err(|e| format!("not an address: {e}"))?
        .next()
        .ok_or("not an address")?;
    if target.ip().is_unspecified() {
        target.set_ip(if target.is_ipv4() {
            [127, 0, 0, 1].into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_bind_is_asked_on_loopback() {
        assert_eq!(
            loopback_for("0.0.0.0:8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(
            loopback_for("[::]:8080").unwrap(),
            "[::1]:8080".parse().unwrap()
        );
        assert_eq!(
            loopback_for("10.0.0.5:9000").unwrap(),
            "10.0.0.5:9000".parse().unwrap()
        );
    }
}
