//! Writing a file of the project (`schema --write`, `lock`) without letting the
//! repository choose where the bytes go.
//!
//! A cloned repository is not necessarily yours: a committed symbolic link
//! `.agent-presets/preset.schema.json -> ~/.bashrc` (or a `schemas` directory linked to
//! somewhere else) must not turn `schema --write` into a write outside the project. So
//! the file's directory — links resolved — must lie inside the directory the file
//! belongs to, and a link in the file's own place is followed only when it leads to a
//! file inside it too. The bytes go to a temporary file created beside the target (never
//! through an existing name) and renamed over it, so a link swapped in meanwhile is
//! replaced, not written through, and a reader never sees half a file.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use super::CliError;

/// Where `path` may be written when it must stay inside `root`: the path to write (the
/// target of a link that stays inside, else `path` with its directories resolved), or
/// why not.
pub(crate) fn confined_target(root: &Path, path: &Path, shown: &str) -> Result<PathBuf, CliError> {
    let root = root
        .canonicalize()
        .map_err(|e| CliError::usage(format!("cannot resolve `{}`: {e}", root.display())))?;
    let refuse = |why: String| {
        CliError::usage_with(
            format!("not writing `{shown}`: {why}"),
            Some(format!(
                "replace the symbolic link with a regular file or directory (e.g. `rm {shown}`), then run the command again"
            )),
        )
    };
    let outside = format!("outside `{}`", root.display());
    let via_link = || refuse(format!("a symbolic link on its path leads {outside}"));
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            // Follow it only to an existing file inside the root.
            match path.canonicalize() {
                Ok(target) if target.starts_with(&root) => Ok(target),
                Ok(_) => Err(refuse(format!("it is a symbolic link to a file {outside}"))),
                Err(_) => Err(refuse(
                    "it is a symbolic link to nothing (a file is never created where a link points)"
                        .to_owned(),
                )),
            }
        }
        Ok(_) => {
            let resolved = path
                .canonicalize()
                .map_err(|e| CliError::usage(format!("cannot resolve `{shown}`: {e}")))?;
            if resolved.starts_with(&root) {
                Ok(resolved)
            } else {
                Err(via_link())
            }
        }
        Err(_) => {
            // Not there yet: its nearest existing ancestor must resolve inside the root;
            // what is missing below it is created as plain directories.
            let mut existing = path;
            let mut missing = Vec::new();
            loop {
                let Some(parent) = existing.parent() else {
                    return Err(via_link());
                };
                match existing.file_name() {
                    Some(name) => missing.push(name.to_owned()),
                    None => return Err(via_link()),
                }
                existing = parent;
                if fs::symlink_metadata(existing).is_ok() {
                    break;
                }
            }
            let mut resolved = existing.canonicalize().map_err(|_| via_link())?;
            if !resolved.starts_with(&root) {
                return Err(via_link());
            }
            for name in missing.iter().rev() {
                if Path::new(name)
                    .components()
                    .any(|c| !matches!(c, Component::Normal(_)))
                {
                    return Err(via_link());
                }
                resolved.push(name);
            }
            Ok(resolved)
        }
    }
}

/// Write `contents` to `path`, which must stay inside `root` (see the module docs):
/// creates the missing directories, then writes a temporary file beside it and renames
/// it into place.
pub(crate) fn write_confined(
    root: &Path,
    path: &Path,
    shown: &str,
    contents: &[u8],
) -> Result<(), CliError> {
    let target = confined_target(root, path, shown)?;
    let dir = target
        .parent()
        .ok_or_else(|| CliError::usage(format!("cannot write `{shown}`: it has no directory")))?;
    fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create the directory of `{shown}`: {e}")))?;
    replace(&target, contents).map_err(|e| CliError::usage(format!("cannot write `{shown}`: {e}")))
}

/// Remove `path` (a file of `root`); a link is removed itself, never what it points to,
/// and a file whose directory lies outside `root` is left alone.
pub(crate) fn remove_confined(root: &Path, path: &Path, shown: &str) -> Result<(), CliError> {
    let dir = path
        .parent()
        .ok_or_else(|| CliError::usage(format!("cannot remove `{shown}`: it has no directory")))?;
    confined_target(root, dir, shown)?;
    fs::remove_file(path).map_err(|e| CliError::usage(format!("cannot remove `{shown}`: {e}")))
}

/// Write `contents` to a new temporary file beside `target` and rename it over
/// `target`. The temporary file is created exclusively (`O_EXCL` never follows a link).
fn replace(target: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut attempt = 0u32;
    let (temporary, mut file) = loop {
        let candidate = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => break (candidate, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    // The file keeps its permissions (a shared, group-writable schema stays so).
    let keep_mode = match fs::metadata(target) {
        Ok(meta) => file.set_permissions(meta.permissions()),
        Err(_) => Ok(()),
    };
    let written = keep_mode
        .and_then(|()| file.write_all(contents))
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temporary, target));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn writes_inside_and_refuses_links_out() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("project");
        let elsewhere = outer.path().join("elsewhere");
        fs::create_dir_all(root.join("a")).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();

        // A new file in new directories.
        write_confined(&root, &root.join("x/y/new.json"), "x/y/new.json", b"1").unwrap();
        assert_eq!(fs::read(root.join("x/y/new.json")).unwrap(), b"1");

        // A link to a file outside: refused, the target untouched.
        fs::write(elsewhere.join("victim"), "keep").unwrap();
        symlink(elsewhere.join("victim"), root.join("a/link.json")).unwrap();
        let e = write_confined(&root, &root.join("a/link.json"), "a/link.json", b"2");
        assert!(matches!(e, Err(CliError::Usage { .. })), "{e:?}");
        assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"keep");

        // A dangling link: refused, nothing created where it points.
        symlink(elsewhere.join("new"), root.join("a/dangling.json")).unwrap();
        assert!(write_confined(&root, &root.join("a/dangling.json"), "d", b"3").is_err());
        assert!(!elsewhere.join("new").exists());

        // A linked directory on the way out: refused, also for a file not there yet.
        symlink(&elsewhere, root.join("out")).unwrap();
        assert!(write_confined(&root, &root.join("out/victim"), "v", b"4").is_err());
        assert!(write_confined(&root, &root.join("out/sub/f"), "f", b"5").is_err());
        assert!(remove_confined(&root, &root.join("out/victim"), "v").is_err());
        assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"keep");
        assert!(!elsewhere.join("sub").exists());

        // A link that stays inside is followed.
        fs::write(root.join("a/real.json"), "old").unwrap();
        symlink("real.json", root.join("a/inner.json")).unwrap();
        write_confined(&root, &root.join("a/inner.json"), "a/inner.json", b"6").unwrap();
        assert_eq!(fs::read(root.join("a/real.json")).unwrap(), b"6");
        assert!(
            fs::symlink_metadata(root.join("a/inner.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // The permissions of a file written again are kept.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(root.join("a/real.json"), fs::Permissions::from_mode(0o640)).unwrap();
        write_confined(&root, &root.join("a/real.json"), "a/real.json", b"7").unwrap();
        let mode = fs::metadata(root.join("a/real.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
        // No temporary file is left behind.
        let left: Vec<_> = fs::read_dir(root.join("a"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
