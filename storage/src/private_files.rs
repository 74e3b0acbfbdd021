//! Files and directories only the service's own user may open: directories 0700, files 0600 (or stricter,
//! as the master key's 0400), whatever the process's umask.
//!
//! A mode given at creation is only an upper bound (the umask takes bits away), and sled creates its files
//! with the default mode, so the modes are set explicitly once a file or directory exists. Everything
//! Switchboard writes under `data_dir`, and every backup, passes through here: a directory is made private
//! the moment it is created, before anything is written into it, so a file inside is never readable by
//! another user even before its own mode is set.

use std::fs::{File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of every directory.
pub const DIR_MODE: u32 = 0o700;
/// The widest mode of a file.
pub const FILE_MODE: u32 = 0o600;

/// Creates the directory `path` (its parent must exist), private.
pub fn create_dir(path: &Path) -> io::Result<()> {
    // Created with the mode (the umask can only take bits away), so it is never open to others between
    // its creation and the chmod that then takes the umask out of the picture.
    std::fs::DirBuilder::new().mode(DIR_MODE).create(path)?;
    std::fs::set_permissions(path, Permissions::from_mode(DIR_MODE))
}

/// Creates `path` and whichever of its ancestors are missing; those it creates are private. An existing
/// directory keeps its mode: it is the operator's.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_all(parent)?;
    }
    match create_dir(path) {
        // Made meanwhile by someone else: theirs, as an existing one.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        other => other,
    }
}

/// Creates (or truncates) the file `path` for writing, private.
pub fn create_file(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .open(path)?;
    file.set_permissions(Permissions::from_mode(FILE_MODE))?;
    Ok(file)
}

/// Makes what is under `dir` private (not `dir` itself, which may be the operator's): directories 0700,
/// files without any group or other bit and never more than 0600. Symbolic links are left alone and not
/// followed, so nothing outside `dir` is changed.
pub fn restrict_tree(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            std::fs::set_permissions(&path, Permissions::from_mode(DIR_MODE))?;
            restrict_tree(&path)?;
        } else if kind.is_file() {
            let mode = entry.metadata()?.permissions().mode() & 0o7777;
            let private = mode & FILE_MODE;
            if mode != private {
                std::fs::set_permissions(&path, Permissions::from_mode(private))?;
            }
        }
    }
    Ok(())
}

/// [`restrict_tree`] at an opening, where a failure (a file the operator put there and owns) is reported
/// and does not stop the store.
pub(crate) fn restrict_data_dir(dir: &Path) {
    if let Err(e) = restrict_tree(dir) {
        tracing::warn!(
            dir = %dir.display(),
            error = %e,
            "cannot make every file under data_dir private (0700 directories, 0600 files)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    #[test]
    fn what_is_created_here_is_private_and_a_tree_is_made_private_without_following_links() {
        let root = tempfile::tempdir().unwrap();
        let nested = root.path().join("a/b");
        create_dir_all(&nested).unwrap();
        assert_eq!(mode(&root.path().join("a")), DIR_MODE);
        assert_eq!(mode(&nested), DIR_MODE);
        create_file(&nested.join("f")).unwrap();
        assert_eq!(mode(&nested.join("f")), FILE_MODE);

        let outside = tempfile::tempdir().unwrap();
        let foreign = outside.path().join("foreign");
        std::fs::write(&foreign, "x").unwrap();
        std::fs::set_permissions(&foreign, Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&foreign, root.path().join("link")).unwrap();
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, Permissions::from_mode(0o755)).unwrap();
        std::fs::write(open.join("g"), "x").unwrap();
        std::fs::set_permissions(open.join("g"), Permissions::from_mode(0o664)).unwrap();
        std::fs::write(root.path().join("key"), "x").unwrap();
        std::fs::set_permissions(root.path().join("key"), Permissions::from_mode(0o400)).unwrap();

        restrict_tree(root.path()).unwrap();
        assert_eq!(mode(&open), DIR_MODE);
        assert_eq!(mode(&open.join("g")), 0o600);
        assert_eq!(mode(&root.path().join("key")), 0o400, "stricter stays");
        assert_eq!(mode(&foreign), 0o644, "a link's target is not touched");
    }
}
