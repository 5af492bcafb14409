//! The `cos` binary: parses the command line and hands over to `cos_hub::cli`.

use clap::Parser;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let code = cos_hub::cli::run(cos_hub::cli::Cli::parse());
    std::process::exit(code);
}
