//! Where a backup asked for by `POST /admin/v1/backups` may go: an absolute path to a new directory whose
//! parent exists, outside `data_dir`, and, with `[server] backup_root`, under that root.
//!
//! The path is resolved before it is judged: its parent is canonicalized (every `..` and symbolic link
//! followed), and the backup is written at the resolved place, so a path that only looks as if it were
//! under the root (`/root/../etc/x`, or a link inside the root pointing out of it) is judged where it
//! really leads. The new directory itself is created by `mkdir`, which never follows a link. What is left
//! is the operator's to keep: no one but the service may write under the root, or a directory could be
//! swapped for a link between the check and the copy. The path is audited, so control characters (a
//! newline could forge a line of a log that prints it) are refused, in the request and in what it resolves
//! to.

use std::path::{Component, Path, PathBuf};

use crate::errors::{ApiError, Code};

/// The directory `raw` names, resolved, if a backup may be written there.
pub fn resolve(
    raw: &str,
    backup_root: Option<&Path>,
    data_dir: &Path,
) -> Result<PathBuf, ApiError> {
    let raw = raw.trim();
    if raw.is_empty() || !Path::new(raw).is_absolute() {
        return Err(ApiError::invalid_request(
            "path: must be an absolute path, such as /var/backups/switchboard/2026-11-27",
        ));
    }
    refuse_control_characters(raw)?;
    // `Path::components` drops a last `.` (`/x/new/.` reads as `/x/new`), so it is refused by its text.
    if raw.ends_with("/.") {
        return Err(ApiError::invalid_request(
            "path: must end with the name of the new directory (not '.' or '..')",
        ));
    }
    let requested = Path::new(raw);
    let (Some(parent), Some(Component::Normal(name))) =
        (requested.parent(), requested.components().next_back())
    else {
        return Err(ApiError::invalid_request(
            "path: must end with the name of the new directory (not '.' or '..')",
        ));
    };
    let parent = parent
        .canonicalize()
        .ok()
        .filter(|parent| parent.is_dir())
        .ok_or_else(|| ApiError::invalid_request("path: its parent directory must exist"))?;
    let target = parent.join(name);
    refuse_control_characters(&target.to_string_lossy())?;
    if let Some(root) = backup_root {
        let root = root.canonicalize().map_err(|_| {
            ApiError::new(
                Code::Conflict,
                "backup_root: the directory [server] backup_root names does not exist on this server",
            )
        })?;
        if !parent.starts_with(&root) {
            return Err(ApiError::invalid_request(format!(
                "path: must be under the backup_root, {}",
                root.display()
            )));
        }
    }
    let data_dir = data_dir
        .canonicalize()
        .unwrap_or_else(|_| data_dir.to_path_buf());
    if parent.starts_with(&data_dir) {
        return Err(ApiError::invalid_request(
            "path: must be outside data_dir, or the next backup would copy this one",
        ));
    }
    // `symlink_metadata`: a link, even a dangling one, is there already.
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(ApiError::new(
            Code::Conflict,
            format!(
                "path: {} exists already; a backup goes into a new directory",
                target.display()
            ),
        ));
    }
    Ok(target)
}

fn refuse_control_characters(path: &str) -> Result<(), ApiError> {
    if path.chars().any(char::is_control) {
        return Err(ApiError::invalid_request(
            "path: must not contain control characters (a newline, a tab, NUL)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dirs {
        _temp: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
        data_dir: PathBuf,
    }

    fn dirs() -> Dirs {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, outside, data_dir) =
            (base.join("root"), base.join("outside"), base.join("data"));
        for dir in [&root, &outside, &data_dir] {
            std::fs::create_dir(dir).unwrap();
        }
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        std::fs::create_dir(root.join("daily")).unwrap();
        Dirs {
            _temp: temp,
            root,
            outside,
            data_dir,
        }
    }

    fn refusal(raw: &str, dirs: &Dirs) -> (u16, String) {
        let refused = resolve(raw, Some(&dirs.root), &dirs.data_dir).unwrap_err();
        (refused.code().status().as_u16(), refused.to_string())
    }

    #[test]
    fn a_path_under_the_root_resolves_to_where_it_leads() {
        let dirs = dirs();
        let root = dirs.root.display();
        for (raw, expected) in [
            (format!("{root}/b1"), dirs.root.join("b1")),
            (format!("{root}/daily/b2"), dirs.root.join("daily/b2")),
            (format!("{root}/daily/../b3"), dirs.root.join("b3")),
            (format!("  {root}/b4  "), dirs.root.join("b4")),
        ] {
            assert_eq!(
                resolve(&raw, Some(&dirs.root), &dirs.data_dir).unwrap(),
                expected,
                "{raw}"
            );
        }
        let anywhere = format!("{}/b5", dirs.outside.display());
        assert_eq!(
            resolve(&anywhere, None, &dirs.data_dir).unwrap(),
            dirs.outside.join("b5"),
            "without a root, anywhere outside data_dir"
        );
    }

    #[test]
    fn a_path_ending_in_a_dot_is_refused_without_a_root_too() {
        let dirs = dirs();
        let dotted = format!("{}/new/.", dirs.outside.display());
        std::fs::create_dir(dirs.outside.join("new")).unwrap();
        assert!(resolve(&dotted, None, &dirs.data_dir).is_err(), "{dotted}");
    }

    #[test]
    fn paths_leading_out_of_the_root_or_unusable_are_refused() {
        let dirs = dirs();
        let root = dirs.root.display();
        let cases = [
            (format!("{}/b", dirs.outside.display()), 400, "outside"),
            (format!("{root}/../outside/b"), 400, "'..' out of the root"),
            (format!("{root}/escape/b"), 400, "a link out of the root"),
            (format!("{root}/daily/.."), 400, "ends with '..'"),
            (format!("{root}/."), 400, "ends with '.'"),
            (root.to_string(), 400, "the root itself, not under it"),
            (format!("{root}/escape"), 409, "a link exists"),
            (format!("{root}/no/such/b"), 400, "no parent"),
            (format!("{root}/b\nforged line"), 400, "a newline"),
            (format!("{root}/b\u{0}"), 400, "NUL"),
            ("relative/b".to_owned(), 400, "relative"),
            (String::new(), 400, "empty"),
            (
                format!("{}/b", dirs.data_dir.display()),
                400,
                "inside data_dir",
            ),
        ];
        for (raw, status, case) in cases {
            assert_eq!(refusal(&raw, &dirs).0, status, "{case}: {raw:?}");
        }
        assert!(std::fs::read_dir(&dirs.outside).unwrap().next().is_none());
    }

    #[test]
    fn a_root_that_is_not_there_is_a_conflict() {
        let dirs = dirs();
        let missing = dirs.outside.join("missing");
        let refused = resolve(
            &format!("{}/b", dirs.outside.display()),
            Some(&missing),
            &dirs.data_dir,
        )
        .unwrap_err();
        assert_eq!(refused.code().status().as_u16(), 409, "{refused}");
    }
}
