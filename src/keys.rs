//! `switchboard keys`: a new master key, and rotation of a stopped store's key.

use std::process::ExitCode;

use anyhow::Context;

use switchboard_storage::seal::{KeySource, MasterKey};
use switchboard_storage::Store;

use crate::cli::{KeysCommand, RotateArgs};
use crate::configuration;

/// Runs a `keys` subcommand; messages go to stderr, the outcome to the exit code.
pub fn run(command: KeysCommand) -> ExitCode {
    let done = match command {
        KeysCommand::Generate { out } => MasterKey::generate()
            .write_new_file(&out)
            .map(|()| format!("wrote a new master key to {} (mode 0400)", out.display()))
            .map_err(anyhow::Error::from),
        KeysCommand::Rotate(args) => rotate(args),
    };
    match done {
        Ok(message) => {
            eprintln!("switchboard keys: {message}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("switchboard keys: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn rotate(args: RotateArgs) -> anyhow::Result<String> {
    let settings = configuration::load(&args.serve.overrides())?;
    let data_dir = &settings.server.data_dir;
    let current = crate::encryption::key_source(&settings)?;
    let new = MasterKey::read_file(&args.new_key_file)?;
    let store = match &settings.storage_engine {
        switchboard_storage::EngineChoice::Sled => format!("the store in {}", data_dir.display()),
        _ => "the store in the PostgreSQL database of [storage] url".to_owned(),
    };
    let rewrapped = Store::rotate_master_key(data_dir, &current, &new, &settings.storage_engine)
        .with_context(|| format!("cannot rotate the master key of {store}"))?;
    let mut message = format!(
        "re-wrapped {rewrapped} epoch keys and the system key of {store} under the new master key; \
         the old key no longer opens it. Put the new key where the server reads its key (move {} over \
         the file [encryption] key_file names, or set SWITCHBOARD_MASTER_KEY to its content) before \
         the next start",
        args.new_key_file.display()
    );
    // The old key beside the data opens nothing any more, and a start that found it would be refused.
    let beside = KeySource::beside_data_path(data_dir);
    if matches!(current, KeySource::BesideData) && !same_file(&beside, &args.new_key_file) {
        std::fs::remove_file(&beside)?;
        message.push_str(&format!("; removed the old key {}", beside.display()));
    }
    Ok(message)
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
