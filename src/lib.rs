//! The capstan server as a library: the `serve` flags and the serving
//! stack. `main.rs` parses the command line and runs [`server::serve`];
//! tests that must reach into a running server (to change what it serves
//! while it runs) start it in-process with [`server::serve_with`].

mod args;
mod batched_writes;
mod pki;
pub mod server;

pub use args::ServeArgs;
