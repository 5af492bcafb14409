//! The `cos` binary: parses the command line and hands over to `cos_hub::cli`.

use clap::Parser;

fn main() {
    let cli = cos_hub::cli::Cli::parse();
    let default_log = if cli.keeps_running() {
        "info,tower_http=warn,notify=warn"
    } else {
        "warn"
    };
    tracing_subscriber::fmt()
        .with_env_filter(log_filter(default_log))
        .with_writer(std::io::stderr)
        .init();
    if !cli.serves_sockets() {
        // A one-shot command piped into `head` should stop quietly when the pipe
        // closes, as Unix tools do. The server keeps SIGPIPE ignored: a client
        // that hangs up must not end the process.
        // SAFETY: restoring the default disposition of one signal at start-up, before any thread exists.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let code = cos_hub::cli::run(cli);
    std::process::exit(code);
}

/// `RUST_LOG`, else `default`; either way without the chatter of two
/// libraries unless `RUST_LOG` names them. notify's event loop warns when it
/// unwatches a deleted folder the kernel has already let go of (the
/// deletion is heard from the folder and from its parent): nothing is lost,
/// the watches are right, and a user deleting a folder should not read a
/// warning. tokei warns of every file extension it does not know, which a
/// repository's walk meets by the thousand (such files are `text`).
fn log_filter(default: &str) -> tracing_subscriber::EnvFilter {
    let asked = std::env::var("RUST_LOG").unwrap_or_default();
    let mut filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default.into());
    for (library, quiet) in [
        ("notify", "notify::inotify=error"),
        ("tokei", "tokei=error"),
    ] {
        if let (false, Ok(quiet)) = (asked.contains(library), quiet.parse()) {
            filter = filter.add_directive(quiet);
        }
    }
    filter
}
