//! Writing an output file whole: a regular file through a temporary renamed over it, so a
//! reader never sees half of it; anything else (a pipe, a terminal, a device) straight
//! through its path, as memtier writes every file. Symbolic links are followed to what
//! they name, so a link stays a link.

use std::ffi::CString;
use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Where the bytes for a path go.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A regular file, or none yet: a temporary beside this path (the last link's target,
    /// where the path is a link) is renamed over it.
    Replace(PathBuf),
    /// Not a regular file (a FIFO, a character device, a socket), or a link through
    /// `/proc` (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`), which names an open file
    /// rather than a place in a directory: the path is opened and written in place.
    /// Renaming over it would put the bytes where no one reads them and break the device.
    InPlace,
}

/// The kernel's own limit on links followed in one lookup (`ELOOP` beyond it).
const MAX_LINKS: usize = 40;

fn is_a_directory() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "is a directory")
}

/// Follows `path`'s links, one at a time, to what the bytes are written to.
fn resolve(path: &Path) -> io::Result<Target> {
    // `new.json/` passes every lookup below (the name does not exist) but no file can
    // take that name.
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return Err(is_a_directory());
    }
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match fs::symlink_metadata(&at) {
            Ok(m) => m,
            // A new file, or the missing target of a link: the rename creates it.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(at)),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_file() {
            return Ok(Target::Replace(at));
        }
        if kind.is_dir() {
            return Err(is_a_directory());
        }
        if !kind.is_symlink() {
            return Ok(Target::InPlace);
        }
        // Resolved against its own directory, made canonical so that a link reached
        // through `/dev/fd` is seen to live in `/proc` too.
        let dir = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.canonicalize()?,
            _ => Path::new(".").canonicalize()?,
        };
        if dir.starts_with("/proc") {
            return Ok(Target::InPlace);
        }
        at = dir.join(fs::read_link(&at)?);
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Writes `bytes` to `path` whole. A regular file (or a new one) is written so that
/// readers see either the old file or the complete new one: a temporary file in the same
/// directory (same file system, so the rename is atomic), flushed to disk, then renamed
/// over it; on failure the temporary is removed. Where `path` is a symbolic link this
/// happens at its final target, and the link is kept. Anything that is not a regular file
/// (a FIFO, a terminal, `/dev/stdout`) is opened and written in place, appended to; its
/// errors (`ENOSPC` from `/dev/full`, `EPIPE`) are returned.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let fail = |e: io::Error| Error::run(format!("cannot write {}: {e}", path.display()));
    match resolve(path).map_err(fail)? {
        Target::InPlace => write_in_place(path, bytes).map_err(fail),
        Target::Replace(file) => replace(&file, bytes).map_err(fail),
    }
}

/// The failures of a set of writes that goes on past each one (the text report, the HDR
/// files, the JSON file, the per-client files: one unwritable does not stop the others),
/// said as one line: every file that was not written, not only the first, so that a user
/// who makes room for one does not learn of the next on the following run.
#[derive(Debug, Default)]
pub struct WriteFailures {
    failed: Vec<Error>,
    /// Standard output's reader went away: no failure of a file, but the end of the
    /// invocation ([`Error::ReaderGone`]) once every file is written.
    reader_gone: bool,
}

impl WriteFailures {
    /// Keeps `result`'s failure, if any.
    pub fn keep(&mut self, result: Result<(), Error>) {
        match result {
            Ok(()) => {}
            Err(Error::ReaderGone) => self.reader_gone = true,
            Err(e) => self.failed.push(e),
        }
    }

    /// `Ok` when every write succeeded; else one error whose message is each failure's in
    /// the order they happened, joined by `; `; [`Error::ReaderGone`] when the only
    /// failure was stdout's reader gone (a file not written is worth its line first).
    pub fn into_result(self) -> Result<(), Error> {
        let mut failed = self.failed.into_iter();
        let Some(first) = failed.next() else {
            return match self.reader_gone {
                true => Err(Error::ReaderGone),
                false => Ok(()),
            };
        };
        let mut message = first.message().to_string();
        for next in failed {
            message.push_str("; ");
            message.push_str(next.message());
        }
        Err(Error::run(message))
    }
}

/// The regular (or new) file a write to `path` lands in, its links followed; `None` for a
/// path written in place (a FIFO, a device, `/dev/stdout`), which has no directory of
/// its own to put files beside.
pub fn regular_target(path: &Path) -> io::Result<Option<PathBuf>> {
    Ok(match resolve(path)? {
        Target::Replace(file) => Some(file),
        Target::InPlace => None,
    })
}

/// Appends, so that `--json-out-file=/dev/stdout > cap.txt` adds the JSON after the text
/// report already written to that file rather than over its first bytes.
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

fn replace(file: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temporary_beside(file)?;
    let written = (|| {
        let mut out = fs::File::create(&tmp).map_err(|e| in_directory(file, e))?;
        out.write_all(bytes)?;
        out.sync_all()?;
        fs::rename(&tmp, file)
    })();
    if written.is_err() {
        // The temporary may not exist (create failed); nothing else to clean up then.
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Checks before a run that a file can later be written at `path` the way
/// [`write_atomic`] writes it: for a regular or new file its temporary is created beside
/// the (final) file and removed again; anything else must be writable by this process
/// (it is not opened: a FIFO would wait for its reader). A missing directory or no
/// permission is then found before the run, not after it (memtier opens its JSON file
/// first, too).
pub fn check_writable(path: &Path) -> io::Result<()> {
    let file = match resolve(path)? {
        Target::InPlace => return check_access(path),
        Target::Replace(file) => file,
    };
    let probe = temporary_beside(&file)?;
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        // Removing it can only fail if another process already did.
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        // A file of that name is no one's to touch; the directory holds files, and the
        // write itself will say if it cannot replace it.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(in_directory(&file, e)),
    }
}

/// The temporary beside `file` could not be created (`err`): when the directory refuses
/// it, says so, naming the directory, since the file itself may well be writable (a
/// JSON file the user may write, in a directory they may not).
fn in_directory(file: &Path, err: io::Error) -> io::Error {
    let refused = matches!(
        err.raw_os_error(),
        Some(libc::EACCES | libc::EPERM | libc::EROFS)
    );
    let Some(dir) = file.parent().filter(|_| refused) else {
        return err;
    };
    let dir = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    let text = err.to_string();
    let why = text
        .find(" (os error")
        .map_or(text.as_str(), |cut| &text[..cut]);
    io::Error::new(
        err.kind(),
        format!(
            "cannot create a file in the directory {} (the file is replaced through a \
             temporary file beside it): {why}",
            dir.display()
        ),
    )
}

/// `access(path, W_OK)`: whether this process may open `path` for writing.
fn check_access(path: &Path) -> io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the name"))?;
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The temporary [`write_atomic`] writes `path`'s bytes to: a hidden name in the same
/// directory, unique to this process.
fn temporary_beside(path: &Path) -> io::Result<PathBuf> {
    let Some(file_name) = path.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file name",
        ));
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    Ok(path.with_file_name(tmp_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failed_write_is_named_in_one_line() {
        let mut failures = WriteFailures::default();
        failures.keep(Ok(()));
        assert_eq!(WriteFailures::default().into_result(), Ok(()));
        failures.keep(Err(Error::run(
            "cannot write a.json: Read-only file system",
        )));
        failures.keep(Ok(()));
        failures.keep(Err(Error::run("cannot write b.txt: Read-only file system")));
        assert_eq!(
            failures.into_result(),
            Err(Error::run(
                "cannot write a.json: Read-only file system; \
                 cannot write b.txt: Read-only file system"
            ))
        );
    }

    #[test]
    fn a_reader_gone_ends_quietly_unless_a_file_failed() {
        let mut failures = WriteFailures::default();
        failures.keep(Err(Error::ReaderGone));
        failures.keep(Ok(()));
        assert_eq!(failures.into_result(), Err(Error::ReaderGone));
        let mut failures = WriteFailures::default();
        failures.keep(Err(Error::ReaderGone));
        failures.keep(Err(Error::run(
            "cannot write a.json: No space left on device",
        )));
        assert_eq!(
            failures.into_result(),
            Err(Error::run("cannot write a.json: No space left on device"))
        );
    }
    use std::io::Read;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_refusing_directory_is_named() {
        let denied = io::Error::from_raw_os_error(libc::EACCES);
        let err = in_directory(Path::new("/results/run.json"), denied);
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(
            err.to_string(),
            "cannot create a file in the directory /results (the file is replaced through a \
             temporary file beside it): Permission denied"
        );
        let here = in_directory(
            Path::new("run.json"),
            io::Error::from_raw_os_error(libc::EROFS),
        );
        assert!(here.to_string().contains("directory . ("), "{here}");
        // Other failures keep their own words (a missing directory is not the same thing).
        let missing = in_directory(
            Path::new("/nope/run.json"),
            io::Error::from_raw_os_error(libc::ENOENT),
        );
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
    }

    /// A fresh directory for one test, removed at the end.
    struct Dir(PathBuf);
    impl Dir {
        fn new(what: &str) -> Dir {
            let dir =
                std::env::temp_dir().join(format!("kvbench-write-{what}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Dir(dir)
        }
        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = Dir::new("replace");
        let path = dir.0.join("out.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(dir.names(), vec!["out.json"]);
    }

    #[test]
    fn atomic_write_to_missing_directory_is_an_error_naming_the_file() {
        let path = Path::new("/nonexistent-kvbench-dir/sub/out.json");
        let err = write_atomic(path, b"x").unwrap_err();
        assert!(matches!(err, Error::Run(_)));
        assert!(
            err.message()
                .starts_with("cannot write /nonexistent-kvbench-dir/sub/out.json: "),
            "{}",
            err.message()
        );
    }

    #[test]
    fn a_link_is_followed_and_kept_even_through_a_chain_or_to_a_missing_target() {
        let dir = Dir::new("links");
        fs::create_dir(dir.0.join("sub")).unwrap();
        fs::write(dir.0.join("sub/target.html"), b"old").unwrap();
        // Relative links resolve against their own directory, not the working one.
        symlink("sub/target.html", dir.0.join("first")).unwrap();
        symlink("first", dir.0.join("link.html")).unwrap();
        write_atomic(&dir.0.join("link.html"), b"new").unwrap();
        assert_eq!(fs::read(dir.0.join("sub/target.html")).unwrap(), b"new");
        for link in ["first", "link.html"] {
            let meta = fs::symlink_metadata(dir.0.join(link)).unwrap();
            assert!(meta.file_type().is_symlink(), "{link} is still a link");
        }
        // A dangling link: its target is created.
        symlink("sub/later.json", dir.0.join("dangling")).unwrap();
        check_writable(&dir.0.join("dangling")).unwrap();
        write_atomic(&dir.0.join("dangling"), b"made").unwrap();
        assert_eq!(fs::read(dir.0.join("sub/later.json")).unwrap(), b"made");
        assert!(
            fs::symlink_metadata(dir.0.join("dangling"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(dir.names(), vec!["dangling", "first", "link.html", "sub"]);
    }

    #[test]
    fn a_link_loop_and_a_directory_are_errors() {
        let dir = Dir::new("loop");
        symlink("b", dir.0.join("a")).unwrap();
        symlink("a", dir.0.join("b")).unwrap();
        let e = write_atomic(&dir.0.join("a"), b"x").unwrap_err();
        assert!(e.message().contains("symbolic links"), "{}", e.message());
        symlink(".", dir.0.join("here")).unwrap();
        let e = check_writable(&dir.0.join("here")).unwrap_err();
        assert_eq!(e.to_string(), "is a directory");
        let e = check_writable(&dir.0.join("new.json/")).unwrap_err();
        assert_eq!(e.to_string(), "is a directory");
    }

    #[test]
    fn a_fifo_is_written_in_place_and_stays_a_fifo() {
        let dir = Dir::new("fifo");
        let fifo = dir.0.join("out.fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        check_writable(&fifo).unwrap();
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            fs::File::open(reader_path)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            got
        });
        write_atomic(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(dir.names(), vec!["out.fifo"]);
    }

    #[test]
    fn links_through_proc_name_open_files_and_are_written_in_place() {
        let dir = Dir::new("proc");
        symlink("/proc/self/fd/1", dir.0.join("stdout")).unwrap();
        assert_eq!(resolve(&dir.0.join("stdout")).unwrap(), Target::InPlace);
        assert_eq!(resolve(Path::new("/dev/stdout")).unwrap(), Target::InPlace);
        assert_eq!(
            resolve(&dir.0.join("plain")).unwrap(),
            Target::Replace(dir.0.join("plain"))
        );
    }
}
