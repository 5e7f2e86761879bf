//! `kvbench intrinsic-latency SECONDS`: redis-cli's `--intrinsic-latency`, the latency the
//! machine itself adds (scheduler, interrupts, a noisy neighbour), measured with no server.
//!
//! ```text
//! argv -> flags (clap, validated Options) -> pin (one CPU) -> probe (busy loop) -> render -> stdout
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`flags`] | `SECONDS` and `--cpu`, validated |
//! | [`pin`] | pin the measuring thread to one CPU |
//! | [`probe`] | time the busy computation until the time is up or Ctrl-C |
//! | [`render`] | redis-cli's three kinds of line |

pub mod flags;
pub mod pin;
pub mod probe;
pub mod render;

use std::ffi::OsString;
use std::io::Write;

use crate::console::print_now;
use crate::error::Error;
use crate::signals;

/// Runs `kvbench intrinsic-latency` with its argv (the first item is the program name)
/// and returns the exit status: 0, or 128 + the signal after Ctrl-C (the summary of what
/// was measured is printed either way), or 141 when stdout's reader has gone.
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let options = match flags::parse(args)? {
        flags::Parsed::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        flags::Parsed::Run(options) => options,
    };
    // Before pinning, so a Ctrl-C from the moment the test is pinned ends it cleanly.
    signals::install();
    pin::pin_current_thread(options.cpu)?;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    let totals = probe::measure(
        options.duration,
        || signals::received().is_some(),
        |max_us| {
            // Flushed at once: a new maximum is rare, and it is what the user watches for.
            line.clear();
            render::new_max(max_us, &mut line);
            out.write_all(line.as_bytes())
                .and_then(|()| out.flush())
                .map_err(write_error)
        },
    )?;
    line.clear();
    render::summary(&totals, &mut line);
    out.write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .map_err(write_error)?;
    Ok(match signals::received() {
        Some(signal) => u8::try_from(signals::exit_code(signal)).unwrap_or(1),
        None => 0,
    })
}

/// A failed write as an error: a reader gone (`| head -2`) is [`Error::ReaderGone`],
/// which ends the test quietly with 141, as SIGPIPE ends redis-cli.
fn write_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Error::ReaderGone;
    }
    Error::run(format!("cannot write the intrinsic latency figures: {e}"))
}
