//! # devicerail-host-test-plugin-support
//!
//! What the test plugins that exist only to be refused (`bad-abi`,
//! `init-panic`, `load-abort`) share: [`refusing_driver!`], a driver type
//! whose every call fails, so each plugin's file holds only its fault.
//! Test support; never published, never shipped.

#![forbid(unsafe_code)]

#[doc(hidden)]
pub use devicerail_host_plugin_api as __api;

/// Declares `pub struct $name;` implementing `Driver` with every call
/// failing with `$why` (the host refuses these plugins before any call).
#[macro_export]
macro_rules! refusing_driver {
    ($(#[$meta:meta])* $name:ident, $why:expr) => {
        $(#[$meta])*
        pub struct $name;

        impl $crate::__api::Driver for $name {
            fn list_devices(
                &self,
                _ctx: &$crate::__api::CallContext,
            ) -> $crate::__api::DriverResult<Vec<$crate::__api::protocol::DeviceInfo>> {
                Err($crate::__api::DriverError::failure($why))
            }

            fn connect(
                &self,
                _ctx: &$crate::__api::CallContext,
                _device: &$crate::__api::protocol::DeviceId,
            ) -> $crate::__api::DriverResult<$crate::__api::protocol::DeviceInfo> {
                Err($crate::__api::DriverError::failure($why))
            }

            fn disconnect(
                &self,
                _ctx: &$crate::__api::CallContext,
                _device: &$crate::__api::protocol::DeviceId,
            ) -> $crate::__api::DriverResult<()> {
                Err($crate::__api::DriverError::failure($why))
            }

            fn capabilities(
                &self,
                _ctx: &$crate::__api::CallContext,
                _device: &$crate::__api::protocol::DeviceId,
            ) -> $crate::__api::DriverResult<$crate::__api::DeviceCapabilities> {
                Err($crate::__api::DriverError::failure($why))
            }

            fn observe(
                &self,
                _ctx: &$crate::__api::CallContext,
                _device: &$crate::__api::protocol::DeviceId,
                _request: &$crate::__api::ObserveRequest,
            ) -> $crate::__api::DriverResult<$crate::__api::DriverObservation> {
                Err($crate::__api::DriverError::failure($why))
            }

            fn execute(
                &self,
                _ctx: &$crate::__api::CallContext,
                _device: &$crate::__api::protocol::DeviceId,
                _call: &$crate::__api::protocol::ActionCall,
            ) -> $crate::__api::DriverResult<$crate::__api::ActionOutput> {
                Err($crate::__api::DriverError::failure($why))
            }
        }
    };
}
