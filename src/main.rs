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
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_log.into()),
        )
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
