//! The container's runtime stage, checked without a container runtime (none can pull base images here):
//! the binary alone, copied where the Dockerfile puts it, serves as an unprivileged user with its data in
//! a directory only that user can write, configured only through the environment variables the
//! Dockerfile sets; and `switchboard healthcheck`, the image's HEALTHCHECK, tells ready from not. Also
//! the systemd unit of `docs/operations.md`: the page's install step puts the binary where the unit runs
//! it, and `systemd-analyze verify` then accepts the unit as written.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{binary, closed_port, write_config, BinaryServer, TestConfig};

/// `nobody` on Debian: an unprivileged user that owns nothing.
const NOBODY: u32 = 65534;

fn healthcheck(address: &str, as_nobody: bool) -> Option<i32> {
    let mut command = unprivileged(binary(), as_nobody);
    command
        .args(["healthcheck", "--address", address])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command.status().unwrap().code()
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `program` run as `nobody` (through `setpriv`, with an empty environment) when asked, else as is.
fn unprivileged(program: &str, as_nobody: bool) -> Command {
    if as_nobody {
        let mut command = Command::new("setpriv");
        command
            .args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "--",
                program,
            ])
            .env_clear();
        command
    } else {
        Command::new(program)
    }
}

#[actix_web::test]
async fn the_healthcheck_subcommand_exits_0_once_ready_and_1_when_nothing_answers() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    let address = server.address.trim_start_matches("http://").to_owned();
    assert_eq!(healthcheck(&address, false), Some(0), "ready");
    let port = address.rsplit(':').next().unwrap();
    assert_eq!(
        healthcheck(&format!("0.0.0.0:{port}"), false),
        Some(0),
        "a wildcard bind is asked on loopback"
    );
    let (_closed, closed_port) = closed_port();
    assert_eq!(
        healthcheck(&format!("127.0.0.1:{closed_port}"), false),
        Some(1),
        "nothing listening"
    );
}

#[actix_web::test]
async fn the_runtime_stage_serves_as_an_unprivileged_user_with_only_the_binary_and_its_env() {
    let as_nobody = running_as_root() && Command::new("setpriv").arg("--version").output().is_ok();
    // /usr/local/bin of the image: the binary alone, readable and runnable by anyone.
    let image = tempfile::tempdir().unwrap();
    std::fs::set_permissions(image.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let installed = image.path().join("switchboard");
    std::fs::copy(binary(), &installed).unwrap();
    std::fs::set_permissions(&installed, std::fs::Permissions::from_mode(0o755)).unwrap();
    // /var/lib/switchboard: owned by the service's user, closed to everyone else.
    let data = image.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    if as_nobody {
        std::os::unix::fs::chown(&data, Some(NOBODY), Some(NOBODY)).unwrap();
    }

    let mut command = unprivileged(installed.to_str().unwrap(), as_nobody);
    command
        .arg("serve")
        .current_dir(&data)
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", &data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let address = first
        .trim()
        .strip_prefix("Switchboard listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();

    let deadline = Instant::now() + Duration::from_secs(20);
    while healthcheck(&address, as_nobody) != Some(0) {
        assert!(Instant::now() < deadline, "never ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Everything it wrote is inside the data directory, owned by the service's user.
    assert!(
        owned_by(&data, if as_nobody { NOBODY } else { current_uid() }),
        "data directory entries owned by the service user"
    );
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(
        child.wait().unwrap().code(),
        Some(0),
        "clean exit on SIGTERM"
    );
}

fn current_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

fn owned_by(dir: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir).unwrap().all(|entry| {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        meta.uid() == uid && (!meta.is_dir() || owned_by(&entry.path(), uid))
    })
}

#[test]
fn the_dockerfile_runs_the_binary_as_a_non_root_user_with_the_documented_env_and_healthcheck() {
    let dockerfile =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile")).unwrap();
    for line in [
        "FROM rust:1-bookworm AS build",
        "RUN cargo build --release --locked --bin switchboard",
        "FROM debian:bookworm-slim",
        "ENV SWITCHBOARD_BIND=0.0.0.0:8080",
        "SWITCHBOARD_DATA_DIR=/var/lib/switchboard",
        "VOLUME [\"/var/lib/switchboard\"]",
        "USER switchboard:switchboard",
        "CMD [\"/usr/local/bin/switchboard\", \"healthcheck\"]",
    ] {
        assert!(dockerfile.contains(line), "Dockerfile lacks {line:?}");
    }
}

/// A fenced block of `docs/operations.md`: the first one of `language` after `heading`.
fn operations_block(heading: &str, language: &str) -> String {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
        .unwrap();
    let section = &docs[docs.find(heading).expect("the heading")..];
    let fence = format!("```{language}\n");
    let start = section.find(&fence).expect("a block") + fence.len();
    section[start..][..section[start..].find("```").unwrap()].to_owned()
}

/// The systemd unit of `operations.md`, exactly as written, after the page's own `install` line put the
/// built binary in place (in a scratch root holding a copy of the system's units): `systemd-analyze
/// verify` accepts it, and would not without that step.
#[test]
fn the_documented_install_step_puts_the_binary_where_the_systemd_unit_runs_it() {
    let unit = operations_block("### As a service", "ini");
    let program = unit
        .lines()
        .find_map(|line| line.strip_prefix("ExecStart="))
        .and_then(|command| command.split_whitespace().next())
        .expect("an ExecStart line")
        .to_owned();
    let steps = operations_block("### As a service", "sh");
    let install: Vec<&str> = steps
        .lines()
        .map(|line| line.trim_start_matches("sudo "))
        .find(|line| line.starts_with("install ") && line.ends_with(&format!(" {program}")))
        .unwrap_or_else(|| panic!("no documented step installs {program}: {steps}"))
        .split_whitespace()
        .collect();
    assert!(
        install.contains(&"target/release/switchboard"),
        "{install:?}"
    );

    let Ok(analyze) = which("systemd-analyze") else {
        eprintln!("skipping systemd-analyze verify: systemd-analyze is not installed");
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let at = |path: &str| root.path().join(path.trim_start_matches('/'));
    std::fs::create_dir_all(at("/usr/lib/systemd")).unwrap();
    std::fs::create_dir_all(at("/etc/systemd/system")).unwrap();
    let copied = Command::new("cp")
        .args(["-a", "/usr/lib/systemd/system"])
        .arg(at("/usr/lib/systemd"))
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::write(at("/etc/systemd/system/switchboard.service"), &unit).unwrap();
    let verify = || {
        Command::new(&analyze)
            .arg("verify")
            .arg(format!("--root={}", root.path().display()))
            .arg("/etc/systemd/system/switchboard.service")
            .output()
            .unwrap()
    };
    assert!(
        !verify().status.success(),
        "verify fails before the install"
    );

    // The documented line, its source the binary under test and its target inside the scratch root.
    std::fs::create_dir_all(at(Path::new(&program).parent().unwrap().to_str().unwrap())).unwrap();
    let args = install[1..].iter().map(|arg| match *arg {
        "target/release/switchboard" => binary().into(),
        arg if arg.starts_with('/') => at(arg).into_os_string(),
        arg => arg.into(),
    });
    assert!(Command::new("install")
        .args(args)
        .status()
        .unwrap()
        .success());
    let verified = verify();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
}

/// `name` on `PATH`.
fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or(())
}
