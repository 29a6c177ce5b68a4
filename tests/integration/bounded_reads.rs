//! `read_bounded` against the files an attacker can put behind a path: FIFOs, devices,
//! sockets, `/proc` files that report size 0 and never end, sparse giants, links to any
//! of these. Each must be refused at once, without blocking and without reading more
//! than the limit.

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use agent_presets::bounded::{BoundedReadError, FileKind, read_bounded};

const MIB: u64 = 1024 * 1024;

/// `read_bounded(path, limit)` on another thread: a hang fails the test (after a
/// minute) instead of hanging the suite.
fn read_or_hang(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    let (tx, rx) = mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(read_bounded(&path, limit));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("read_bounded blocked"))
}

#[test]
fn regular_files_up_to_the_limit_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("p.yaml");
    fs::write(&path, b"0123456789").unwrap();
    assert_eq!(read_bounded(&path, 10).unwrap(), b"0123456789");
    assert_eq!(read_bounded(&path, u64::MAX).unwrap(), b"0123456789");
    let err = read_bounded(&path, 9).unwrap_err();
    assert!(
        matches!(
            err,
            BoundedReadError::TooLarge {
                size: Some(10),
                limit: 9
            }
        ),
        "{err:?}"
    );
    let empty = tmp.path().join("empty.yaml");
    fs::write(&empty, b"").unwrap();
    assert_eq!(read_bounded(&empty, 0).unwrap(), b"");
}

#[test]
fn missing_paths_and_directories() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(matches!(
        read_bounded(&tmp.path().join("nope.yaml"), MIB),
        Err(BoundedReadError::NotFound)
    ));
    assert!(matches!(
        read_bounded(tmp.path(), MIB),
        Err(BoundedReadError::Directory)
    ));
}

/// A 1.5 GB sparse file is refused from its reported size: nothing is read.
#[test]
fn a_sparse_giant_is_refused_by_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("giant.yaml");
    let file = fs::File::create(&path).unwrap();
    file.set_len(1_500_000_000).unwrap();
    let err = read_or_hang(&path, MIB).unwrap_err();
    assert!(
        matches!(
            err,
            BoundedReadError::TooLarge {
                size: Some(1_500_000_000),
                limit: MIB
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "it is 1500000000 bytes, more than the limit of 1 MiB (1048576 bytes)"
    );
}

#[cfg(unix)]
mod unix {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;

    use super::*;

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(rc, 0, "mkfifo: {}", std::io::Error::last_os_error());
    }

    /// Without a writer, a blocking open of a FIFO never returns: the open must be
    /// non-blocking and the FIFO refused on its descriptor.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo.yaml");
        mkfifo(&fifo);
        let err = read_or_hang(&fifo, MIB).unwrap_err();
        assert!(
            matches!(err, BoundedReadError::NotRegular(FileKind::Fifo)),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "it is a FIFO (named pipe), not a regular file"
        );
        // Through a link too: the descriptor decides, not the name.
        let link = tmp.path().join("link.yaml");
        symlink(&fifo, &link).unwrap();
        let err = read_or_hang(&link, MIB).unwrap_err();
        assert!(
            matches!(err, BoundedReadError::NotRegular(FileKind::Fifo)),
            "{err:?}"
        );
    }

    #[test]
    fn devices_are_refused() {
        for device in ["/dev/zero", "/dev/null", "/dev/urandom"] {
            if !Path::new(device).exists() {
                continue;
            }
            let err = read_or_hang(Path::new(device), MIB).unwrap_err();
            assert!(
                matches!(err, BoundedReadError::NotRegular(FileKind::CharDevice)),
                "{device}: {err:?}"
            );
        }
    }

    #[test]
    fn sockets_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("socket.yaml");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let err = read_or_hang(&path, MIB).unwrap_err();
        assert!(
            matches!(err, BoundedReadError::NotRegular(FileKind::Socket)),
            "{err:?}"
        );
    }

    #[test]
    fn dangling_links_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("dangling.yaml");
        symlink(tmp.path().join("nowhere"), &link).unwrap();
        assert!(matches!(
            read_bounded(&link, MIB),
            Err(BoundedReadError::DanglingLink)
        ));
    }

    /// `/proc` files report size 0. A short one is read whole; one that never ends is
    /// cut at the limit and refused, having cost at most `limit + 1` bytes.
    #[cfg(target_os = "linux")]
    #[test]
    fn proc_files_that_lie_about_their_size() {
        let status = Path::new("/proc/self/status");
        assert_eq!(fs::metadata(status).unwrap().len(), 0);
        let text = read_bounded(status, MIB).unwrap();
        assert!(text.starts_with(b"Name:"));

        let pagemap = Path::new("/proc/self/pagemap");
        if pagemap.exists() {
            let err = read_or_hang(pagemap, MIB).unwrap_err();
            assert!(
                matches!(
                    err,
                    BoundedReadError::TooLarge {
                        size: None,
                        limit: MIB
                    }
                ),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                "it holds more than the limit of 1 MiB (1048576 bytes)"
            );
        }
    }
}
