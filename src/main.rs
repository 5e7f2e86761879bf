//! The `kvbench` binary: picks the front end (first word or program name) and maps its
//! error to an exit status.

use std::process::ExitCode;

use kvbench::frontend;

fn main() -> ExitCode {
    let (front_end, args) = frontend::pick(std::env::args_os().collect());
    match front_end(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if err.is_said() {
                kvbench::eprintln_safe!("error: {err}");
            }
            ExitCode::from(err.exit_code() as u8)
        }
    }
}
