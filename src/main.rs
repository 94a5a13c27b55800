//! The `majordomus` binary: hands the command line to the CLI projection and exits with its code.

fn main() -> std::process::ExitCode {
    majordomus::cli::main()
}
