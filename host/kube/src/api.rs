//! The kubelet's gRPC APIs, generated at build time from the vendored
//! upstream `.proto` files (`proto/`, Apache-2.0, The Kubernetes Authors).
//! Nothing but generated code lives here.

#![allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]

/// `k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1`: `Registration` (served
/// by the kubelet) and `DevicePlugin` (served by us).
pub mod deviceplugin {
    tonic::include_proto!("v1beta1");
}

/// `k8s.io/kubelet/pkg/apis/podresources/v1`: `PodResourcesLister`
/// (served by the kubelet), read to learn which allocations are still in
/// use.
pub mod podresources {
    tonic::include_proto!("v1");
}
