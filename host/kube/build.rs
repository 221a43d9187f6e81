//! Generates the kubelet's gRPC API types and services from the vendored
//! `.proto` files under `proto/` (see the header of each), with `protox`
//! as the compiler, so building never needs a system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const PROTOS: &[&str] = &[
        "proto/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto",
        "proto/k8s.io/kubelet/pkg/apis/podresources/v1/api.proto",
    ];
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    // Servers: our DevicePlugin, and the kubelet's Registration and
    // PodResourcesLister for the fake kubelet of the tests. Clients: the
    // other way round.
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
