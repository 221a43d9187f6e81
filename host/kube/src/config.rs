//! What `devicerail kube device-plugin` is started with: where the shared
//! host and the kubelet listen, which platform becomes which extended
//! resource, where allocations are kept, what a pod is given, and how
//! often things are polled. Plain data and its checks; no I/O.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The kubelet's device-plugin registration socket, where the kubelet
/// serves `Registration` (our plugin sockets go in the same directory).
pub const DEFAULT_KUBELET_SOCKET: &str = "/var/lib/kubelet/device-plugins/kubelet.sock";
/// The kubelet's PodResources socket.
pub const DEFAULT_POD_RESOURCES_SOCKET: &str = "/var/lib/kubelet/pod-resources/kubelet.sock";
/// Where a pod finds the host's socket directory.
pub const DEFAULT_CONTAINER_SOCKET_DIR: &str = "/run/devicerail";
/// How often the host's devices are read, by default.
pub const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// How often the kubelet's PodResources are read, by default.
pub const DEFAULT_RELEASE_POLL: Duration = Duration::from_secs(2);
/// How long a new allocation is never released, by default.
pub const DEFAULT_RELEASE_GRACE: Duration = Duration::from_secs(10);
/// The device-plugin API version we implement.
pub const API_VERSION: &str = "v1beta1";

/// Platform (the `kind` of a device's `platform` in `devices.list`) to
/// extended resource, by default.
pub const DEFAULT_RESOURCES: &[(&str, &str)] = &[
    ("android", "devicerail.dev/android"),
    ("ios", "devicerail.dev/ios-simulator"),
    ("web", "devicerail.dev/browser"),
];

/// One extended resource and the platform whose devices it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The platform kind (`android`, `ios`, `web`, `mock`, …).
    pub platform: String,
    /// The extended resource name (`devicerail.dev/android`).
    pub name: String,
}

impl Resource {
    /// The plugin socket's file name in the kubelet's directory:
    /// `devicerail.dev_android.sock` for `devicerail.dev/android`.
    pub fn endpoint(&self) -> String {
        format!("{}.sock", self.name.replace('/', "_"))
    }
}

/// A bad `PLATFORM=NAME` mapping or setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A mapping without `=` (or with an empty side).
    #[error("expected PLATFORM=RESOURCE (e.g. android=devicerail.dev/android), not {0:?}")]
    Mapping(String),
    #[error(
        "{0:?} is not an extended resource name: it needs a domain prefix outside kubernetes.io (e.g. devicerail.dev/android), and a name of at most 63 letters, digits, '-', '_' or '.'"
    )]
    /// The resource name the kubelet would refuse.
    ResourceName(String),
    /// Two platforms name the same resource.
    #[error("two platforms map to the resource {0}")]
    DuplicateResource(String),
    /// Every mapping was switched off.
    #[error("no platform maps to a resource; nothing to offer")]
    NoResources,
    /// An interval outside its bounds.
    #[error("{what} must be between {min_ms} ms and {max_ms} ms")]
    Interval {
        /// Which interval (its flag).
        what: &'static str,
        /// The smallest accepted value.
        min_ms: u64,
        /// The largest accepted value.
        max_ms: u64,
    },
    /// A path that must be absolute (the kubelet's directory, the state).
    #[error("{0} must be an absolute path")]
    Relative(PathBuf),
}

fn dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Whether `name` is an extended resource name the kubelet accepts:
/// `DOMAIN/NAME`, the domain a DNS subdomain not under `kubernetes.io`.
pub fn valid_resource_name(name: &str) -> bool {
    let Some((domain, rest)) = name.split_once('/') else {
        return false;
    };
    let domain_ok = domain.len() <= 253 && domain.contains('.') && domain.split('.').all(dns_label);
    let kubernetes = domain == "kubernetes.io" || domain.ends_with(".kubernetes.io");
    let name_ok = !rest.is_empty()
        && rest.len() <= 63
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && rest.as_bytes()[0].is_ascii_alphanumeric()
        && rest.as_bytes()[rest.len() - 1].is_ascii_alphanumeric();
    domain_ok && !kubernetes && name_ok
}

/// The resources for `mappings` (`PLATFORM=NAME`, each replacing the
/// default of its platform; `PLATFORM=` drops the platform).
pub fn resources(mappings: &[String]) -> Result<Vec<Resource>, ConfigError> {
    let mut out: Vec<Resource> = DEFAULT_RESOURCES
        .iter()
        .map(|(p, n)| Resource {
            platform: (*p).to_owned(),
            name: (*n).to_owned(),
        })
        .collect();
    for m in mappings {
        let Some((platform, name)) = m.split_once('=') else {
            return Err(ConfigError::Mapping(m.clone()));
        };
        let platform = platform.trim();
        if platform.is_empty() {
            return Err(ConfigError::Mapping(m.clone()));
        }
        out.retain(|r| r.platform != platform);
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        if !valid_resource_name(name) {
            return Err(ConfigError::ResourceName(name.to_owned()));
        }
        out.push(Resource {
            platform: platform.to_owned(),
            name: name.to_owned(),
        });
    }
    for (i, r) in out.iter().enumerate() {
        if out[..i].iter().any(|o| o.name == r.name) {
            return Err(ConfigError::DuplicateResource(r.name.clone()));
        }
    }
    if out.is_empty() {
        return Err(ConfigError::NoResources);
    }
    Ok(out)
}

/// Everything the device plugin runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// The shared host's control socket, as this process reaches it.
    pub host_socket: PathBuf,
    /// The shared host's pool manager's key file (in its data directory,
    /// never in the socket directory pods see): read at every connection,
    /// its key presented so the host lets this process reserve devices.
    pub pool_key_file: PathBuf,
    /// The kubelet's registration socket; plugin sockets go beside it.
    pub kubelet_socket: PathBuf,
    /// The kubelet's PodResources socket (`None`: allocations are freed
    /// only when the kubelet allocates their device again).
    pub pod_resources_socket: Option<PathBuf>,
    /// The offered resources.
    pub resources: Vec<Resource>,
    /// Where allocations (with their tokens) are kept across restarts;
    /// never inside the socket directory pods see.
    pub state_file: PathBuf,
    /// The host's socket directory as the node sees it (the source of the
    /// mount a pod gets).
    pub node_socket_dir: PathBuf,
    /// Where a pod sees that directory.
    pub container_socket_dir: PathBuf,
    /// How often the host's devices are read.
    pub poll: Duration,
    /// How often the kubelet's PodResources are read.
    pub release_poll: Duration,
    /// An allocation younger than this is never released (the kubelet
    /// records an allocation in PodResources only after `Allocate`).
    pub release_grace: Duration,
}

/// Polls faster than this would load the host for nothing.
const MIN_POLL: Duration = Duration::from_millis(50);
/// Polls slower than this break the 2 s health bound or leave devices
/// held long after their pods.
const MAX_POLL: Duration = Duration::from_secs(60);

impl Config {
    /// The kubelet's device-plugin directory (where our sockets go).
    pub fn plugin_dir(&self) -> &Path {
        self.kubelet_socket.parent().unwrap_or(Path::new("/"))
    }

    /// The host's socket as a pod sees it.
    pub fn container_socket(&self) -> PathBuf {
        let name = self
            .host_socket
            .file_name()
            .map(Path::new)
            .unwrap_or(Path::new("host.sock"));
        self.container_socket_dir.join(name)
    }

    /// Checks paths and intervals.
    pub fn check(&self) -> Result<(), ConfigError> {
        for p in [
            &self.host_socket,
            &self.pool_key_file,
            &self.kubelet_socket,
            &self.state_file,
            &self.node_socket_dir,
            &self.container_socket_dir,
        ] {
            if !p.is_absolute() {
                return Err(ConfigError::Relative(p.clone()));
            }
        }
        for (what, d) in [
            ("--poll-ms", self.poll),
            ("--release-poll-ms", self.release_poll),
        ] {
            if !(MIN_POLL..=MAX_POLL).contains(&d) {
                return Err(ConfigError::Interval {
                    what,
                    min_ms: MIN_POLL.as_millis() as u64,
                    max_ms: MAX_POLL.as_millis() as u64,
                });
            }
        }
        if self.release_grace > Duration::from_secs(600) {
            return Err(ConfigError::Interval {
                what: "--release-grace-ms",
                min_ms: 0,
                max_ms: 600_000,
            });
        }
        if self.resources.is_empty() {
            return Err(ConfigError::NoResources);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_three_platforms_and_mappings_replace_them() {
        let names = |r: Vec<Resource>| r.into_iter().map(|r| r.name).collect::<Vec<_>>();
        assert_eq!(
            names(resources(&[]).expect("defaults")),
            [
                "devicerail.dev/android",
                "devicerail.dev/ios-simulator",
                "devicerail.dev/browser"
            ]
        );
        let r = resources(&[
            "mock=devicerail.dev/mock".into(),
            "web=example.com/chromium".into(),
            "ios=".into(),
        ])
        .expect("valid");
        assert_eq!(
            names(r.clone()),
            [
                "devicerail.dev/android",
                "devicerail.dev/mock",
                "example.com/chromium"
            ]
        );
        assert_eq!(r[1].endpoint(), "devicerail.dev_mock.sock");
    }

    #[test]
    fn bad_mappings_are_refused() {
        for (m, bad) in [
            ("android", "mapping"),
            ("=devicerail.dev/x", "mapping"),
            ("android=android", "name"),
            ("android=kubernetes.io/android", "name"),
            ("android=sub.kubernetes.io/android", "name"),
            ("android=Devicerail.dev/android", "name"),
            ("android=devicerail.dev/-x", "name"),
        ] {
            let e = resources(&[m.to_owned()]).expect_err(m);
            match bad {
                "mapping" => assert!(matches!(e, ConfigError::Mapping(_)), "{m}: {e}"),
                _ => assert!(matches!(e, ConfigError::ResourceName(_)), "{m}: {e}"),
            }
        }
        assert!(matches!(
            resources(&["mock=devicerail.dev/android".into()]),
            Err(ConfigError::DuplicateResource(_))
        ));
        assert!(matches!(
            resources(&["android=".into(), "ios=".into(), "web=".into()]),
            Err(ConfigError::NoResources)
        ));
    }
}
