//! `devicerail kube device-plugin` through the real binary: a shared host
//! (`serve --listen unix:PATH`, the mock plugin and the hostile one) and
//! the device plugin as separate processes, registering with a fake
//! kubelet written against the same generated API (it dials the plugin
//! back and watches `ListAndWatch`, as the real kubelet does). Clients
//! are the official Rust client (and the Python one, running the example
//! Job's script) through `devicerail attach`. Also: the manifests in
//! `deploy/kubernetes/` checked offline with `kubernetes-validate`.
//!
//! Timings (registration to first device, health changes, re-registration)
//! are printed (`--show-output`) and measured properly by the `kube`
//! bench; the only bound asserted is the issue's: registered again within
//! 5 s of a kubelet restart.

mod support;

use support::client::Launch as _;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use devicerail_client::methods::{DeviceConnect, DeviceDisconnect, DeviceSelect};
use devicerail_host_kube::api::deviceplugin::{AllocateRequest, ContainerAllocateRequest};
use devicerail_host_kube::fake_kubelet::{FakeKubelet, FakePodResources, PodDevices, Registered};
use devicerail_host_testing::host_process::HostProcess;
use serde_json::{Value, json};
use support::client::{ClientHost, expect_error, hello_with};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");
const WAIT: Duration = Duration::from_secs(30);
const MOCK: &str = "devicerail.dev/mock";
const HOSTILE: &str = "hostile-1";

/// One node: the shared host, the device plugin, and the kubelet's fakes,
/// in a private temp root.
struct Node {
    root: tempfile::TempDir,
    host: HostProcess,
    socket: PathBuf,
    plugin: Option<Child>,
    kubelet: FakeKubelet,
    pods: FakePodResources,
}

impl Node {
    async fn start() -> Self {
        let root = support::root_with_hostile();
        let socket = root.path().join("run/host.sock");
        let config = root.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "[plugins.test-hostile]\ninit_fails_while = \"{}\"\n",
                root.path().join("hostile-down").display()
            ),
        )
        .expect("write the configuration");
        let mut cmd = HostProcess::serve_command(
            Path::new(BIN),
            &root.path().join("plugins"),
            &root.path().join("data"),
        );
        let mut listen = std::ffi::OsString::from("unix:");
        listen.push(&socket);
        cmd.arg("--listen")
            .arg(listen)
            .arg("--config")
            .arg(&config)
            .env("DEVICERAIL_MOCK_DEVICES", "2")
            .env("RUST_LOG", "info");
        let host = HostProcess::spawn(cmd);
        let deadline = Instant::now() + WAIT;
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "the host never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        let dir = root.path().join("device-plugins");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let kubelet = FakeKubelet::start(&dir).await.expect("the fake kubelet");
        let pods =
            FakePodResources::start(&root.path().join("pod-resources.sock")).expect("podresources");
        let mut node = Self {
            root,
            host,
            socket,
            plugin: None,
            kubelet,
            pods,
        };
        node.start_plugin();
        node
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.path().join(p)
    }

    /// Starts the device plugin (its log appended to `plugin.log`).
    fn start_plugin(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path("plugin.log"))
            .expect("log file");
        let child = Command::new(BIN)
            .args(["kube", "device-plugin", "--socket"])
            .arg(&self.socket)
            .arg("--kubelet-socket")
            .arg(self.kubelet.socket())
            .arg("--pod-resources-socket")
            .arg(self.path("pod-resources.sock"))
            .args(["--resource", &format!("mock={MOCK}")])
            .arg("--state-file")
            .arg(self.path("kube-state/allocations.json"))
            .arg("--pool-key")
            .arg(self.path("data/pool-manager.key"))
            .arg("--node-socket-dir")
            .arg(self.path("run"))
            .args(["--release-poll-ms", "200", "--release-grace-ms", "1000"])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start the device plugin");
        self.plugin = Some(child);
    }

    fn kill_plugin(&mut self) {
        if let Some(mut c) = self.plugin.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn plugin_log(&self) -> String {
        std::fs::read_to_string(self.path("plugin.log")).unwrap_or_default()
    }

    /// The registrations of every resource; the mock one's, and when the
    /// first of them arrived.
    async fn registered(&mut self) -> (Registered, Instant, Vec<String>) {
        let (mut all, first) = self.registrations().await;
        let mut names: Vec<String> = all.keys().cloned().collect();
        names.sort();
        (all.remove(MOCK).expect("the mock resource"), first, names)
    }

    /// The registration of every resource by name, and when the first of
    /// them arrived.
    async fn registrations(&mut self) -> (HashMap<String, Registered>, Instant) {
        let mut names = Vec::new();
        let mut all = HashMap::new();
        let mut first = None;
        while names.len() < 4 {
            let r = self
                .kubelet
                .next_registration(WAIT)
                .await
                .unwrap_or_else(|| panic!("registered so far: {names:?}\n{}", self.plugin_log()));
            first.get_or_insert(r.at);
            assert_eq!(r.request.version, "v1beta1");
            assert_eq!(
                r.request.endpoint,
                format!("{}.sock", r.request.resource_name.replace('/', "_"))
            );
            names.push(r.request.resource_name.clone());
            all.insert(r.request.resource_name.clone(), r);
        }
        (all, first.unwrap_or_else(Instant::now))
    }

    /// An official Rust client through `devicerail attach` with `env`.
    async fn client(&self, name: &str, env: &[(&str, &str)]) -> ClientHost {
        let mut hello = hello_with(&["device.routing.v1", "request.control.v1"]);
        hello.client.name = name.into();
        ClientHost::attach_with_env(&self.socket, hello, env)
            .await
            .expect("the client attaches")
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill_plugin();
        if std::thread::panicking() {
            eprintln!("device plugin log:\n{}", self.plugin_log());
            eprintln!("host stderr:\n{}", self.host.stderr());
        }
    }
}

/// Waits for a list in which `device` has `health`.
async fn health(mock: &mut Registered, device: &str, health: &str) -> Instant {
    mock.wait_for(WAIT, |l| l.health(device) == Some(health))
        .await
        .unwrap_or_else(|| {
            panic!(
                "{device} never became {health}: {:?}",
                mock.listings.borrow().as_ref().map(|l| l.devices.clone())
            )
        })
        .at
}

/// The host's plugin worker serving the hostile plugin.
fn hostile_worker(host: u32) -> Option<i32> {
    support::plugin_workers(host)
        .into_iter()
        .find(|(_, cmd)| cmd.contains("hostile"))
        .and_then(|(pid, _)| i32::try_from(pid).ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn registers_lists_the_devices_and_follows_their_health() {
    let mut node = Node::start().await;
    let (mut mock, first_registration, names) = node.registered().await;
    assert_eq!(
        names,
        [
            "devicerail.dev/android",
            "devicerail.dev/browser",
            "devicerail.dev/ios-simulator",
            MOCK
        ]
    );
    assert!(!mock.options.pre_start_required);
    let listed = mock
        .wait_for(WAIT, |l| {
            l.devices.len() == 3 && l.devices.iter().all(|d| d.health == "Healthy")
        })
        .await
        .expect("the mock devices and the hostile one, healthy");
    let ids: Vec<&str> = listed.devices.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, [HOSTILE, "mock-1", "mock-2"]);
    println!(
        "kube: registration to first device list {:?}",
        listed.at.saturating_duration_since(first_registration)
    );

    // The hostile plugin's worker crashes and cannot come back while
    // `hostile-down` exists: its device goes unhealthy, the others stay.
    let down = node.path("hostile-down");
    std::fs::write(&down, b"").expect("create");
    let worker = hostile_worker(node.host.child.id()).expect("the hostile worker");
    let killed = Instant::now();
    // SAFETY: signalling a process of the host this test started.
    assert_eq!(unsafe { libc::kill(worker, libc::SIGKILL) }, 0);
    let unhealthy = health(&mut mock, HOSTILE, "Unhealthy").await;
    let latest = mock.listings.borrow().clone().expect("a list");
    assert_eq!(latest.health("mock-1"), Some("Healthy"));
    println!(
        "kube: plugin worker killed -> Unhealthy in {:?}",
        unhealthy.saturating_duration_since(killed)
    );
    // It stays unhealthy while the worker cannot start, then comes back.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        mock.listings
            .borrow()
            .as_ref()
            .and_then(|l| l.health(HOSTILE).map(str::to_owned)),
        Some("Unhealthy".to_owned())
    );
    std::fs::remove_file(&down).expect("remove");
    let removed = Instant::now();
    let back = health(&mut mock, HOSTILE, "Healthy").await;
    println!(
        "kube: worker allowed to start -> Healthy in {:?} (includes the supervisor's back-off)",
        back.saturating_duration_since(removed)
    );

    // A client outside Kubernetes takes mock-2: it is no longer offered;
    // when it lets go, it is again.
    let outside = node.client("outside", &[]).await;
    outside
        .call::<DeviceSelect>(json!({ "deviceId": "mock-2" }))
        .await
        .expect("select");
    outside.call0::<DeviceConnect>().await.expect("connect");
    let connected = Instant::now();
    let taken = health(&mut mock, "mock-2", "Unhealthy").await;
    outside
        .call0::<DeviceDisconnect>()
        .await
        .expect("disconnect");
    let released = Instant::now();
    let free = health(&mut mock, "mock-2", "Healthy").await;
    println!(
        "kube: leased outside -> Unhealthy in {:?}; released -> Healthy in {:?}",
        taken.saturating_duration_since(connected),
        free.saturating_duration_since(released)
    );
    outside.close().await;
}

/// The example Job's script (`use_device.py` of its ConfigMap).
fn job_script() -> String {
    let yaml = std::fs::read_to_string(
        support::python::workspace_root().join("deploy/kubernetes/example-job.yaml"),
    )
    .expect("the example job");
    let mut lines = yaml.lines().skip_while(|l| l.trim() != "use_device.py: |");
    lines.next().expect("the script's key");
    let mut script = String::new();
    for line in lines {
        if !line.is_empty() && !line.starts_with("    ") {
            break;
        }
        script.push_str(line.strip_prefix("    ").unwrap_or(""));
        script.push('\n');
    }
    script
}

/// Runs the example Job's script with the official Python client, as the
/// pod would with the environment `Allocate` gave it (the socket as this
/// machine sees it instead of the container's path).
fn run_job_script(node: &Node, env: &HashMap<String, String>) -> Option<Value> {
    let python = support::python::venv_python(
        "kube python job",
        "the official Python client",
        "devicerail",
        "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install --require-hashes -r .ci/python-client-requirements.txt",
    )?;
    let script = node.path("use_device.py");
    std::fs::write(&script, job_script()).expect("write the script");
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .env("DEVICERAIL_BIN", BIN)
        .env("DEVICERAIL_SOCKET", &node.socket)
        .env("DEVICERAIL_DEVICE_ID", &env["DEVICERAIL_DEVICE_ID"])
        .env("DEVICERAIL_LEASE_TOKEN", &env["DEVICERAIL_LEASE_TOKEN"]);
    let run = support::python::run_suite(cmd, Duration::from_secs(120), "the example job");
    assert!(run.status.success(), "{}\n{}", run.out, run.err);
    Some(serde_json::from_str(run.out.lines().last().unwrap_or("")).expect("a JSON line"))
}

/// `device.connect` on `device` from `client` must be refused as in use;
/// the error's details.
async fn refused(client: &ClientHost, device: &str) -> Value {
    client
        .call::<DeviceSelect>(json!({ "deviceId": device }))
        .await
        .expect("select");
    expect_error(
        client.call0::<DeviceConnect>().await,
        "device_in_use",
        -32014,
        true,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn allocate_reserves_the_device_for_the_pod_until_it_ends() {
    let mut node = Node::start().await;
    let (mut mock, _, _) = node.registered().await;
    health(&mut mock, "mock-1", "Healthy").await;

    let answer = mock
        .plugin
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest {
                devices_ids: vec!["mock-1".into()],
            }],
        })
        .await
        .expect("allocated")
        .into_inner();
    let c = &answer.container_responses[0];
    let env: HashMap<String, String> = c.envs.clone().into_iter().collect();
    assert_eq!(env["DEVICERAIL_SOCKET"], "/run/devicerail/host.sock");
    assert_eq!(env["DEVICERAIL_DEVICE_ID"], "mock-1");
    let token = env["DEVICERAIL_LEASE_TOKEN"].clone();
    assert!(token.len() >= 32, "a token");
    assert_eq!(c.mounts.len(), 1);
    assert_eq!(
        c.mounts[0].host_path,
        node.path("run").display().to_string()
    );
    assert_eq!(c.mounts[0].container_path, "/run/devicerail");
    assert!(c.mounts[0].read_only);
    node.pods.set(vec![PodDevices {
        namespace: "ci".into(),
        pod: "browser-job".into(),
        container: "test".into(),
        resource: MOCK.into(),
        device_ids: vec!["mock-1".into()],
    }]);

    // Every other client is refused, and sees the reservation.
    let other = node.client("other", &[]).await;
    let details = refused(&other, "mock-1").await;
    assert_eq!(details["deviceId"], "mock-1");
    assert_eq!(details["holderConnectionId"], Value::Null);
    assert_eq!(
        details["holderReservation"]["label"],
        format!("kubernetes {MOCK}")
    );
    let wrong = devicerail_host_kube::token::fresh().expect("token");
    let impostor = node
        .client("impostor", &[("DEVICERAIL_LEASE_TOKEN", wrong.expose())])
        .await;
    refused(&impostor, "mock-1").await;
    impostor.close().await;
    // The lease listing (this host's extension; raw, since the official
    // clients' types drop it) shows the reservation; the pool methods stay
    // unknown to a client that did not negotiate them.
    let mut raw = HostProcess::spawn({
        let mut cmd = Command::new(BIN);
        cmd.arg("attach").arg("--socket").arg(&node.socket);
        cmd
    });
    raw.hello();
    let listed = raw.ok("devices.list", None);
    let lease = listed["devices"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["id"] == "mock-1"))
        .map(|d| d["lease"]["holder"].clone());
    assert_eq!(lease, Some(json!("reservation")), "{listed}");
    let unknown = raw.call("devicerailHost.pool.status", None);
    assert_eq!(
        unknown["error"]["data"]["code"], "method_not_found",
        "{unknown}"
    );
    assert!(raw.finish().success());

    // The pod's own client takes it with the token (the Rust client, then
    // the example Job's Python script).
    let pod = node
        .client("pod", &[("DEVICERAIL_LEASE_TOKEN", token.as_str())])
        .await;
    pod.call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");
    pod.call0::<DeviceConnect>()
        .await
        .expect("the pod connects its device");
    pod.ok("session.start", None).await;
    let tapped = pod
        .ok(
            "device.execute",
            Some(support::client::action("tap", json!({ "x": 3, "y": 4 }))),
        )
        .await;
    assert!(tapped["output"].is_object(), "{tapped}");
    assert_eq!(
        refused(&other, "mock-1").await["holderClient"]["name"],
        "pod"
    );
    // Reserved for the pod (taken or not), it is still Healthy.
    let now = mock.listings.borrow().clone().expect("a list");
    assert_eq!(now.health("mock-1"), Some("Healthy"));
    pod.ok("session.end", Some(json!({}))).await;
    pod.call0::<DeviceDisconnect>().await.expect("disconnect");
    pod.close().await;
    refused(&other, "mock-1").await;
    if let Some(out) = run_job_script(&node, &env) {
        println!("kube: the example job's script: {out}");
        assert_eq!(out["device"], "mock-1");
    }

    // The device plugin crashes and starts again: the reservation holds,
    // and its allocation (token included) is read back from the state file.
    node.kill_plugin();
    node.start_plugin();
    let (mut mock, _, _) = node.registered().await;
    health(&mut mock, "mock-1", "Healthy").await;
    refused(&other, "mock-1").await;

    // The pod ends: the kubelet stops listing it, the device is released.
    node.pods.set(Vec::new());
    let ended = Instant::now();
    loop {
        let r = other.answer("device.connect", None).await;
        if r.get("result").is_some() {
            break;
        }
        assert_eq!(r["error"]["data"]["code"], "device_in_use", "{r}");
        assert!(ended.elapsed() < WAIT, "never released");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "kube: pod gone from PodResources -> device free in {:?}",
        ended.elapsed()
    );
    // Now leased outside Kubernetes: no longer offered.
    health(&mut mock, "mock-1", "Unhealthy").await;
    other.close().await;

    // The token never reached a log.
    assert!(
        !node.plugin_log().contains(&token),
        "the plugin logged the token"
    );
    assert!(
        !node.host.stderr().contains(&token),
        "the host logged the token"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_kubelet_restart_leads_to_registration_again() {
    let mut node = Node::start().await;
    let (mut mock, _, _) = node.registered().await;
    health(&mut mock, "mock-1", "Healthy").await;
    for round in 0..2 {
        node.kubelet.restart().expect("restart");
        let restarted = Instant::now();
        let (mut mock, first, names) = node.registered().await;
        assert_eq!(names.len(), 4);
        let again = first.saturating_duration_since(restarted);
        println!("kube: kubelet restart {round} -> registered again in {again:?}");
        assert!(again < Duration::from_secs(5), "{again:?}");
        health(&mut mock, "mock-2", "Healthy").await;
    }
}

/// A raw socket connection that introduces itself with `preamble` words
/// and says hello with `required` and `optional` features; the hello
/// answer, and the connection for more requests.
fn raw_hello(
    socket: &Path,
    preamble: &str,
    required: &[&str],
    optional: &[&str],
) -> (Value, RawConn) {
    let stream = std::os::unix::net::UnixStream::connect(socket).expect("connect");
    let mut conn = RawConn {
        reader: std::io::BufReader::new(stream.try_clone().expect("clone")),
        writer: stream,
        next: 1,
    };
    use std::io::Write;
    writeln!(conn.writer, "#devicerail-attach v1 {preamble}").expect("preamble");
    let hello = conn.call(
        "system.hello",
        json!({
            "client": { "name": "squatter", "version": "1" },
            "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] },
            "features": { "required": required, "optional": optional },
        }),
    );
    (hello, conn)
}

/// One raw NDJSON connection.
struct RawConn {
    reader: std::io::BufReader<std::os::unix::net::UnixStream>,
    writer: std::os::unix::net::UnixStream,
    next: u64,
}

impl RawConn {
    fn call(&mut self, method: &str, params: Value) -> Value {
        use std::io::{BufRead, Write};
        let id = self.next;
        self.next += 1;
        let frame = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(self.writer, "{frame}").expect("write");
        loop {
            let mut line = String::new();
            assert!(
                self.reader.read_line(&mut line).expect("read") > 0,
                "closed"
            );
            let v: Value = serde_json::from_str(&line).expect("json");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_the_pool_manager_can_reserve_devices() {
    let node = Node::start().await;
    let pool = "devicerailHost.pool.v1";
    let key_file = node.path("data/pool-manager.key");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&key_file)
            .expect("the host wrote its key")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        !key_file.starts_with(node.path("run")),
        "never in the socket directory"
    );
    let token = devicerail_host_kube::token::fresh().expect("token");
    let reserve = json!({ "deviceId": "mock-1", "token": token.expose(), "label": "squatter" });

    // A client that requires the extension is refused, clearly.
    let (hello, _) = raw_hello(&node.socket, "squatter", &[pool], &[]);
    assert_eq!(
        hello["error"]["data"]["code"], "required_feature_unsupported",
        "{hello}"
    );
    assert_eq!(
        hello["error"]["data"]["details"]["unsupportedRequired"],
        json!([pool])
    );
    assert!(
        hello["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("pool manager"),
        "{hello}"
    );
    // One that offers it goes without, and its pool calls are unknown;
    // so is one that presents a key that is not the host's.
    let wrong_key = "0".repeat(64);
    for preamble in [
        "squatter".to_owned(),
        format!("squatter pool-key={wrong_key}"),
    ] {
        let (hello, mut conn) = raw_hello(&node.socket, &preamble, &[], &[pool]);
        let enabled = hello["result"]["features"]["enabled"].clone();
        assert!(
            !enabled.as_array().expect("features").contains(&json!(pool)),
            "{hello}"
        );
        for (method, params) in [
            ("devicerailHost.pool.reserve", reserve.clone()),
            ("devicerailHost.pool.status", json!({})),
            (
                "devicerailHost.pool.release",
                json!({ "deviceId": "mock-1", "token": token.expose() }),
            ),
        ] {
            let r = conn.call(method, params);
            assert_eq!(
                r["error"]["data"]["code"], "method_not_found",
                "{method}: {r}"
            );
            assert!(!r.to_string().contains(token.expose()));
        }
    }
    // The device stays free: any client connects it.
    let other = node.client("other", &[]).await;
    other
        .call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");
    other
        .call0::<DeviceConnect>()
        .await
        .expect("mock-1 is free");
    other.call0::<DeviceDisconnect>().await.expect("disconnect");
    other.close().await;
    // The key's holder is the manager.
    let key = std::fs::read_to_string(&key_file).expect("key");
    let (hello, mut manager) = raw_hello(
        &node.socket,
        &format!("manager pool-key={}", key.trim()),
        &[pool],
        &[],
    );
    assert!(hello.get("result").is_some(), "{hello}");
    let status = manager.call("devicerailHost.pool.status", json!({}));
    assert!(status["result"]["devices"].is_array(), "{status}");
    assert!(
        !node.host.stderr().contains(key.trim()),
        "the host logged its key"
    );
    assert!(
        !node.host.stderr().contains(&wrong_key),
        "the host logged a presented key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_allocate_changes_nothing() {
    let mut node = Node::start().await;
    let (mut all, _) = node.registrations().await;
    let mut mock = all.remove(MOCK).expect("mock");
    health(&mut mock, "mock-1", "Healthy").await;
    let env = mock.allocate_one(&["mock-1"]).await.expect("allocated");
    let token = env["DEVICERAIL_LEASE_TOKEN"].clone();
    let pod = node
        .client("pod", &[("DEVICERAIL_LEASE_TOKEN", token.as_str())])
        .await;
    pod.call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");
    pod.call0::<DeviceConnect>()
        .await
        .expect("the pod takes it");
    let state = std::fs::read_to_string(node.path("kube-state/allocations.json")).expect("state");

    // The kubelet allocates the running pod's device again: refused, and
    // the pod keeps its device, its reservation and its token.
    let again = mock.allocate_one(&["mock-1"]).await.expect_err("in use");
    assert_eq!(again.code, "FailedPrecondition", "{again}");
    assert!(!again.message.contains(&token));
    let other = node.client("other", &[]).await;
    refused(&other, "mock-1").await;
    pod.ok("session.start", None).await;
    pod.ok(
        "device.execute",
        Some(support::client::action("tap", json!({ "x": 1, "y": 1 }))),
    )
    .await;
    pod.ok("session.end", Some(json!({}))).await;
    pod.call0::<DeviceDisconnect>().await.expect("disconnect");
    pod.close().await;
    // Still reserved for the pod's token: others are refused, the token
    // takes it again, and the state file is as it was.
    refused(&other, "mock-1").await;
    let pod = node
        .client("pod again", &[("DEVICERAIL_LEASE_TOKEN", token.as_str())])
        .await;
    pod.call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");
    pod.call0::<DeviceConnect>()
        .await
        .expect("the token still works");
    pod.close().await;
    assert_eq!(
        std::fs::read_to_string(node.path("kube-state/allocations.json")).expect("state"),
        state
    );

    // Another resource's device, and an unknown one, are refused by this
    // resource and reserved for nobody.
    let mut browser = all.remove("devicerail.dev/browser").expect("browser");
    for id in ["mock-2", "no-such-device"] {
        let wrong = browser.allocate_one(&[id]).await.expect_err("not ours");
        assert_eq!(wrong.code, "InvalidArgument", "{wrong}");
    }
    other
        .call::<DeviceSelect>(json!({ "deviceId": "mock-2" }))
        .await
        .expect("select");
    other
        .call0::<DeviceConnect>()
        .await
        .expect("mock-2 stayed free");
    other.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_kubelet_socket_replaced_at_once_is_noticed() {
    let mut node = Node::start().await;
    let (mut mock, _, _) = node.registered().await;
    health(&mut mock, "mock-1", "Healthy").await;
    let mut reused = 0;
    for round in 0..6 {
        reused += usize::from(node.kubelet.replace_socket().expect("replace"));
        let replaced = Instant::now();
        let (_, first, names) = node.registered().await;
        assert_eq!(names.len(), 4);
        let again = first.saturating_duration_since(replaced);
        assert!(again < Duration::from_secs(5), "round {round}: {again:?}");
    }
    println!(
        "kube: kubelet socket replaced 6 times (inode number reused {reused} times), registered again each time"
    );
}

#[test]
fn the_manifests_are_valid_kubernetes_objects() {
    let Some(python) = support::python::venv_python(
        "kube manifests",
        "kubernetes-validate",
        "kubernetes_validate",
        "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install --require-hashes -r .ci/python-client-requirements.txt -r .ci/kubernetes-validate-requirements.txt",
    ) else {
        return;
    };
    let validator = python.with_file_name("kubernetes-validate");
    let dir = support::python::workspace_root().join("deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("deploy/kubernetes")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    // The oldest and the newest Kubernetes the validator carries that we
    // document (device plugins are GA everywhere; DRA examples need 1.34).
    for version in ["1.33.0", "1.37.0"] {
        let out = Command::new(&validator)
            .args(["-k", version, "--strict"])
            .args(&files)
            .output()
            .expect("run kubernetes-validate");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        println!("{text}");
        assert!(out.status.success(), "{text}");
        // An unknown kind only warns (and exits 0): that is a failure too.
        assert!(!text.lines().any(|l| l.starts_with("WARN")), "{text}");
        let passed = text
            .lines()
            .filter(|l| l.contains(" passed for resource "))
            .count();
        assert!(passed >= 4, "every object was checked: {text}");
    }
}
