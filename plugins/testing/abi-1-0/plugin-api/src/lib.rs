//! The FFI module of `devicerail-host-plugin-api` 0.1.0 at plugin ABI 1.0, frozen
//! (see `ffi`).

pub mod ffi;
