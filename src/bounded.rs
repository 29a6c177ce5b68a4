//! Reading a user-supplied file without trusting it: [`read_bounded`].
//!
//! A path a user (or a committed repository) hands us may name anything: a FIFO whose
//! read blocks forever, a device that never ends (`/dev/zero`), a `/proc` file that
//! reports size 0 and then streams without end (`/proc/self/pagemap`), a sparse file of
//! gigabytes, or a regular file another process swaps for one of these between a check
//! and the read. So the decision is taken on the opened descriptor, never on a separate
//! look-up by name:
//!
//! 1. open non-blocking (`O_NONBLOCK`, plus `O_CLOEXEC` and `O_NOCTTY`), so opening a
//!    FIFO or a device cannot block and a terminal never becomes ours;
//! 2. `fstat` the descriptor: it must be a regular file, and the size it reports must
//!    be within the limit;
//! 3. read in chunks and stop as soon as more than `limit` bytes arrived (the effect of
//!    reading through `take(limit + 1)`), so a file that grows, or lies about its size,
//!    still costs at most `limit` bytes plus one chunk, and is refused.

use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Read the whole regular file at `path`, refusing anything else and anything larger
/// than `limit` bytes. Symbolic links are followed (the decision is taken on what the
/// opened descriptor is). Never blocks on a FIFO or device and never holds more than
/// `limit` bytes of the file (plus one 64 KiB read buffer) in memory.
///
/// ```
/// use agent_presets::bounded::{BoundedReadError, read_bounded};
///
/// let dir = std::env::temp_dir().join(format!("bounded-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let file = dir.join("p.yaml");
/// std::fs::write(&file, "version: 1\n").unwrap();
/// assert_eq!(read_bounded(&file, 1024).unwrap(), b"version: 1\n");
/// let err = read_bounded(&file, 4).unwrap_err();
/// assert!(matches!(err, BoundedReadError::TooLarge { size: Some(11), limit: 4 }));
/// assert!(matches!(read_bounded(&dir, 1024), Err(BoundedReadError::Directory)));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    read_open_file(open(path)?, limit)
}

/// A file as [`read_bounded_identified`] read it: its bytes and the path the opened
/// descriptor names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentifiedFile {
    /// What was read.
    pub bytes: Vec<u8>,
    /// The absolute path, symbolic links resolved, of the file these bytes came from, as
    /// the kernel names the opened descriptor; `None` when it cannot be told for sure
    /// (the file was removed or replaced after the open, a platform without a way to ask).
    pub resolved: Option<PathBuf>,
}

/// [`read_bounded`], also saying which file the bytes came from, decided on the same
/// descriptor: what a decision about *whose* the file is (trust) must rest on, since a
/// second look-up by name can find another file (a symbolic link flipped in between).
///
/// On Linux the path is the descriptor's own (`/proc/self/fd/N`), on macOS
/// `fcntl(F_GETPATH)`, elsewhere the name resolved; in every case it is kept only when
/// that path names the very file read (same device and inode as `fstat` of the
/// descriptor), so a path the file left after the open is never reported.
pub fn read_bounded_identified(
    path: &Path,
    limit: u64,
) -> Result<IdentifiedFile, BoundedReadError> {
    let file = open(path)?;
    let resolved = descriptor_path(&file, path);
    let bytes = read_open_file(file, limit)?;
    Ok(IdentifiedFile { bytes, resolved })
}

/// The path that names the file open as `file` (opened from `path`), when it can be
/// told for sure.
fn descriptor_path(file: &File, path: &Path) -> Option<PathBuf> {
    let candidate = descriptor_name(file, path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let open = file.metadata().ok()?;
        let named = std::fs::metadata(&candidate).ok()?;
        (open.dev() == named.dev() && open.ino() == named.ino()).then_some(candidate)
    }
    #[cfg(not(unix))]
    {
        Some(candidate)
    }
}

#[cfg(target_os = "linux")]
fn descriptor_name(file: &File, _path: &Path) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    let link = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    std::fs::read_link(link).ok().filter(|p| p.is_absolute())
}

#[cfg(target_os = "macos")]
fn descriptor_name(file: &File, _path: &Path) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: F_GETPATH writes at most PATH_MAX bytes and a NUL into `buf`.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) };
    if r == -1 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0)?;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(&buf[..end])))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn descriptor_name(_file: &File, path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok()
}

/// [`read_bounded`] of a file already opened (without blocking, `O_NONBLOCK`): the
/// decision is taken on this descriptor. For a file opened beneath a directory
/// descriptor ([`crate::confine`]).
pub(crate) fn read_open_file(file: File, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    let meta = file.metadata().map_err(BoundedReadError::Io)?;
    match FileKind::of(&meta) {
        FileKind::Regular => {}
        FileKind::Directory => return Err(BoundedReadError::Directory),
        other => return Err(BoundedReadError::NotRegular(other)),
    }
    let size = meta.len();
    if size > limit {
        return Err(BoundedReadError::TooLarge {
            size: Some(size),
            limit,
        });
    }
    read_at_most(file, size, limit)
}

/// Like [`read_bounded`], but a FIFO is read as well: for a path a user names on the
/// command line as the input itself (`--var-file <(make-values)`, `--var-file
/// /dev/stdin`, a named pipe), where waiting for the writer is what they asked for, as
/// with `cat`. The read is bounded all the same, and anything but a regular file or a
/// FIFO (a device, a socket, a directory) is refused. Never use it for paths found by
/// looking around (preset discovery): there a FIFO is refused, so nothing blocks.
pub fn read_bounded_or_pipe(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    let file = open(path)?;
    let meta = file.metadata().map_err(BoundedReadError::Io)?;
    match FileKind::of(&meta) {
        FileKind::Fifo => read_fifo(file, limit),
        _ => {
            drop(file);
            read_bounded(path, limit)
        }
    }
}

/// Read the FIFO `file` (opened with `O_NONBLOCK`, judged a FIFO) to its end, waiting
/// for a writer, on this one descriptor: opening the path again to wait for a writer
/// would hang for good when the writer had already written and gone between the two
/// opens (a fast `<(printf …)`).
#[cfg(unix)]
fn read_fifo(file: File, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    read_at_most(
        WaitingFifo {
            file,
            delivered: false,
        },
        0,
        limit,
    )
}

/// A non-blocking FIFO read end that waits (poll(2)) instead of seeing end-of-file
/// before its writer arrived.
///
/// A non-blocking read returns 0 both when no writer has come yet and when every writer
/// has gone. After bytes have arrived, 0 is the end. Before, the read waits in poll(2):
/// Linux reports a hang-up there only once a writer that came after the open has gone,
/// so it waits for the first writer; a writer that wrote nothing and left before the
/// open is waited for like `cat` does.
#[cfg(unix)]
struct WaitingFifo {
    file: File,
    /// Has the FIFO delivered a byte yet?
    delivered: bool,
}

#[cfg(unix)]
impl WaitingFifo {
    /// Wait until the FIFO has bytes or its writer hung up; `true` for bytes.
    fn wait(&self) -> io::Result<bool> {
        use std::os::fd::AsRawFd;
        let mut pollfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, for the length given.
            let n = unsafe { libc::poll(&mut pollfd, 1, -1) };
            if n >= 0 {
                return Ok(pollfd.revents & libc::POLLIN != 0);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

#[cfg(unix)]
impl Read for WaitingFifo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.file.read(buf) {
                Ok(0) if !self.delivered && !buf.is_empty() => {
                    if !self.wait()? {
                        // A writer came and went without a byte.
                        return Ok(0);
                    }
                }
                Ok(n) => {
                    self.delivered |= n > 0;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait()?;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(not(unix))]
fn read_fifo(file: File, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    read_at_most(file, 0, limit)
}

/// Read a stream (standard input, a pipe) to its end, refusing it as soon as it has
/// delivered more than `limit` bytes: never more than `limit` bytes plus one 64 KiB
/// buffer in memory, however much the writer sends.
pub fn read_stream_bounded(reader: impl Read, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    read_at_most(reader, 0, limit)
}

/// Read `file` to its end, failing as soon as it has delivered more than `limit` bytes:
/// the memory used is at most `limit` bytes plus one chunk, whatever the file claims.
/// Every read asks for a whole chunk (`/proc/self/pagemap` refuses reads that are not
/// a multiple of 8 bytes; a `take(limit + 1)` would end with a 1-byte read).
fn read_at_most(mut file: impl Read, size: u64, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    const CHUNK: usize = 64 * 1024;
    // Reads go straight into the result, a chunk of the claimed size (plus the byte that
    // shows the end) at a time: a 4 KB preset costs a 4 KB read, not a zeroed 64 KiB
    // buffer and a copy. A stream, or a file that claims no size, gets whole 64 KiB
    // chunks. Chunks stay multiples of 8 bytes.
    let chunk = match usize::try_from(size.min(limit)) {
        Ok(0) | Err(_) => CHUNK,
        Ok(claimed) => claimed
            .saturating_add(1)
            .next_multiple_of(8)
            .clamp(8, CHUNK),
    };
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let start = bytes.len();
        bytes.resize(start + chunk, 0);
        let n = match file.read(&mut bytes[start..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                bytes.truncate(start);
                continue;
            }
            Err(e) => return Err(BoundedReadError::Io(e)),
        };
        bytes.truncate(start + n);
        if n == 0 {
            break;
        }
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
            return Err(BoundedReadError::TooLarge { size: None, limit });
        }
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open(path: &Path) -> Result<File, BoundedReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| open_error(path, e))
}

#[cfg(not(unix))]
fn open(path: &Path) -> Result<File, BoundedReadError> {
    OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(|e| open_error(path, e))
}

fn open_error(path: &Path, e: io::Error) -> BoundedReadError {
    match e.kind() {
        // A name that is there but leads nowhere deserves its own words.
        io::ErrorKind::NotFound => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => BoundedReadError::DanglingLink,
            _ => BoundedReadError::NotFound,
        },
        io::ErrorKind::IsADirectory => BoundedReadError::Directory,
        // A socket cannot be opened at all (ENXIO); say what it is. Looking it up by
        // name here only words the error: nothing is read either way.
        _ => match std::fs::metadata(path).map(|m| FileKind::of(&m)) {
            Ok(FileKind::Regular | FileKind::Directory) | Err(_) => BoundedReadError::Io(e),
            Ok(kind) => BoundedReadError::NotRegular(kind),
        },
    }
}

/// Why [`read_bounded`] refused or failed. `Display` gives a user-facing clause that
/// reads well after "cannot read `FILE`: ".
#[derive(Debug)]
#[non_exhaustive]
pub enum BoundedReadError {
    /// Nothing exists at the path.
    NotFound,
    /// The path is a symbolic link (or leads through one) to something that does not
    /// exist.
    DanglingLink,
    /// The path is a directory.
    Directory,
    /// The path is something that is not a regular file: a FIFO, a device, a socket.
    NotRegular(FileKind),
    /// The file holds more than `limit` bytes. `size` is the size the file reported
    /// when that alone was too large; `None` when the file reported a smaller size (or
    /// none, like `/proc` files) and then held more.
    TooLarge {
        /// The reported size, when it was over the limit.
        size: Option<u64>,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Any other I/O failure (permissions, a failing disk, ...).
    Io(io::Error),
}

impl fmt::Display for BoundedReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundedReadError::NotFound => f.write_str("no such file"),
            BoundedReadError::DanglingLink => {
                f.write_str("it is a symbolic link to a file that does not exist")
            }
            BoundedReadError::Directory => f.write_str("it is a directory, not a file"),
            BoundedReadError::NotRegular(kind) => {
                write!(f, "it is {kind}, not a regular file")
            }
            BoundedReadError::TooLarge {
                size: Some(size),
                limit,
            } => write!(
                f,
                "it is {size} bytes, more than the limit of {}",
                byte_size(*limit)
            ),
            BoundedReadError::TooLarge { size: None, limit } => {
                write!(f, "it holds more than the limit of {}", byte_size(*limit))
            }
            BoundedReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BoundedReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BoundedReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// What a path turned out to be, as `fstat` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A FIFO (named pipe): reading it may block until someone writes.
    Fifo,
    /// A socket.
    Socket,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Anything else the platform has.
    Other,
}

impl FileKind {
    fn of(meta: &Metadata) -> FileKind {
        let t = meta.file_type();
        if t.is_file() {
            return FileKind::Regular;
        }
        if t.is_dir() {
            return FileKind::Directory;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if t.is_fifo() {
                return FileKind::Fifo;
            }
            if t.is_socket() {
                return FileKind::Socket;
            }
            if t.is_char_device() {
                return FileKind::CharDevice;
            }
            if t.is_block_device() {
                return FileKind::BlockDevice;
            }
        }
        FileKind::Other
    }
}

impl fmt::Display for FileKind {
    /// With an article: "a FIFO (named pipe)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "a special file",
        })
    }
}

/// `1 MiB (1048576 bytes)`, `64 KiB (65536 bytes)`, `1000 bytes`.
pub fn byte_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    for (unit, name) in [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name} ({bytes} bytes)", bytes / unit);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_as_input_is_read_bounded_and_discovery_refuses_it() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("values");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_bounded(&fifo, 100),
            Err(BoundedReadError::NotRegular(FileKind::Fifo))
        ));
        // The writer comes later: the read waits for it.
        let write = |text: Vec<u8>| {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::fs::write(fifo, text)
            })
        };
        let writer = write(b"a: 1\n".to_vec());
        assert_eq!(read_bounded_or_pipe(&fifo, 100).unwrap(), b"a: 1\n");
        writer.join().unwrap().unwrap();
        // More than the limit is refused, however it arrives.
        let writer = write(vec![b'x'; 300_000]);
        assert!(matches!(
            read_bounded_or_pipe(&fifo, 100_000),
            Err(BoundedReadError::TooLarge { size: None, .. })
        ));
        // The writer sees the read end close (EPIPE) or has finished; either is fine.
        let _ = writer.join().unwrap();
        // Regular files and the rest are judged as by `read_bounded`.
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert_eq!(
            read_bounded_or_pipe(&dir.path().join("f"), 10).unwrap(),
            b"x"
        );
        assert!(matches!(
            read_bounded_or_pipe(dir.path(), 10),
            Err(BoundedReadError::Directory)
        ));
        assert!(matches!(
            read_bounded_or_pipe(Path::new("/dev/zero"), 10),
            Err(BoundedReadError::NotRegular(FileKind::CharDevice))
        ));
    }

    /// The writer has written everything and gone before the read starts (a fast
    /// `<(printf …)`): the bytes wait in the pipe and are read, with no hang waiting for a
    /// writer that will never come again. (Opening the path a second time to wait for a
    /// writer hung here for good.)
    #[cfg(unix)]
    #[test]
    fn a_fifo_whose_writer_already_left_is_read_without_waiting() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("values");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        // A reader of our own keeps the pipe (and what is written) alive meanwhile.
        let _keep = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        std::fs::write(&fifo, "a: 1\n").unwrap();
        let (done, result) = std::sync::mpsc::channel();
        let reader = fifo.clone();
        std::thread::spawn(move || done.send(read_bounded_or_pipe(&reader, 100)));
        let read = result
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the read hung waiting for a writer that already left");
        assert_eq!(read.unwrap(), b"a: 1\n");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(byte_size(1024 * 1024), "1 MiB (1048576 bytes)");
        assert_eq!(byte_size(64 * 1024), "64 KiB (65536 bytes)");
        assert_eq!(
            byte_size(3 * 1024 * 1024 * 1024),
            "3 GiB (3221225472 bytes)"
        );
        assert_eq!(byte_size(1000), "1000 bytes");
        assert_eq!(byte_size(0), "0 bytes");
    }

    #[test]
    fn messages_follow_cannot_read() {
        let cases = [
            (BoundedReadError::NotFound, "no such file"),
            (
                BoundedReadError::DanglingLink,
                "it is a symbolic link to a file that does not exist",
            ),
            (BoundedReadError::Directory, "it is a directory, not a file"),
            (
                BoundedReadError::NotRegular(FileKind::Fifo),
                "it is a FIFO (named pipe), not a regular file",
            ),
            (
                BoundedReadError::TooLarge {
                    size: Some(2_000_000),
                    limit: 1024 * 1024,
                },
                "it is 2000000 bytes, more than the limit of 1 MiB (1048576 bytes)",
            ),
            (
                BoundedReadError::TooLarge {
                    size: None,
                    limit: 10,
                },
                "it holds more than the limit of 10 bytes",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_path_read_is_the_descriptors_not_the_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, b) = (root.join("a.yaml"), root.join("b.yaml"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let link = root.join("link.yaml");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let read = read_bounded_identified(&link, 16).unwrap();
        assert_eq!(
            (read.bytes.as_slice(), read.resolved.as_deref()),
            (&b"a"[..], Some(&*a))
        );
        // The path a descriptor names after its file was replaced is not reported.
        let file = open(&b).unwrap();
        std::fs::remove_file(&b).unwrap();
        std::fs::write(&b, "new b").unwrap();
        assert_eq!(descriptor_path(&file, &b), None);
    }
}
