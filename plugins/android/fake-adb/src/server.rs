//! A private, real adb server for one test: `adb -P <port> start-server`
//! on a free port, `adb -P <port> connect` to fakes, and
//! `adb -P <port> kill-server` on drop (also when the test panics).

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The adb binary: `$DEVICERAIL_TEST_ADB`, else `adb` on `PATH`.
pub fn adb_binary() -> PathBuf {
    std::env::var_os("DEVICERAIL_TEST_ADB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("adb"))
}

/// Whether an adb binary can be run at all.
pub fn adb_available() -> bool {
    Command::new(adb_binary())
        .arg("version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> io::Result<u16> {
    for _ in 0..32 {
        let port = TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port();
        if !(5555..=5585).contains(&port) && port != 5037 {
            return Ok(port);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrNotAvailable,
        "no free port",
    ))
}

/// A running adb server owned by the test.
#[derive(Debug)]
pub struct AdbServer {
    port: u16,
}

impl AdbServer {
    /// Starts a server on a free port and waits until it answers.
    pub fn start() -> io::Result<Self> {
        let mut last = None;
        for _ in 0..3 {
            let port = free_port()?;
            let server = Self { port };
            match server.adb(&["start-server"]) {
                Ok(_) => {}
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if server.query("host:version").is_ok() {
                    return Ok(server);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            last = Some(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("adb server on {port} did not answer"),
            ));
        }
        Err(last.unwrap_or_else(|| io::Error::other("adb server did not start")))
    }

    /// The port the server listens on, on 127.0.0.1 (`adb -P`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `tcp:127.0.0.1:<port>` (the `ADB_SERVER_SOCKET` form).
    pub fn socket_spec(&self) -> String {
        format!("tcp:127.0.0.1:{}", self.port)
    }

    /// Runs `adb -P <port> <args>` and returns its stdout. The server
    /// daemon inherits no pipe, so this never waits on it.
    pub fn adb(&self, args: &[&str]) -> io::Result<String> {
        let out = Command::new(adb_binary())
            .arg("-P")
            .arg(self.port.to_string())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("ADB_SERVER_SOCKET")
            .env_remove("ANDROID_ADB_SERVER_PORT")
            .spawn()?
            .wait_with_output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.success() {
            Ok(text)
        } else {
            Err(io::Error::other(format!("adb {args:?} failed: {text}")))
        }
    }

    /// `adb connect 127.0.0.1:<fake port>`.
    pub fn connect(&self, device_port: u16) -> io::Result<String> {
        self.adb(&["connect", &format!("127.0.0.1:{device_port}")])
    }

    /// `adb connect` without waiting for its answer (a silent device
    /// keeps it waiting for 10 s); a thread reaps the client.
    pub fn connect_detached(&self, device_port: u16) -> io::Result<()> {
        let mut child = Command::new(adb_binary())
            .arg("-P")
            .arg(self.port.to_string())
            .arg("connect")
            .arg(format!("127.0.0.1:{device_port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env_remove("ADB_SERVER_SOCKET")
            .env_remove("ANDROID_ADB_SERVER_PORT")
            .spawn()?;
        std::thread::spawn(move || child.wait());
        Ok(())
    }

    /// One host request (`host:devices-l`, ...) over the smart-socket
    /// protocol; returns the length-prefixed answer.
    pub fn query(&self, request: &str) -> io::Result<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        s.write_all(format!("{:04x}{request}", request.len()).as_bytes())?;
        let mut status = [0u8; 4];
        s.read_exact(&mut status)?;
        let mut len = [0u8; 4];
        s.read_exact(&mut len)?;
        let len = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("0"), 16)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut body = vec![0u8; len];
        s.read_exact(&mut body)?;
        let body = String::from_utf8_lossy(&body).into_owned();
        if &status == b"OKAY" {
            Ok(body)
        } else {
            Err(io::Error::other(body))
        }
    }

    /// The state the server lists for `serial` (`device`, `offline`, ...).
    pub fn state_of(&self, serial: &str) -> Option<String> {
        let list = self.query("host:devices").ok()?;
        list.lines().find_map(|l| {
            let (s, state) = l.split_once('\t')?;
            (s == serial).then(|| state.trim().to_owned())
        })
    }

    /// Polls until `serial` is listed in `state`.
    pub fn wait_for_state(&self, serial: &str, state: &str, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let now = self.state_of(serial);
            if now.as_deref() == Some(state) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{serial} is {now:?}, not {state}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Connects a fake and waits until it is listed in `state`.
    pub fn attach(&self, device_port: u16, state: &str) -> io::Result<String> {
        let serial = format!("127.0.0.1:{device_port}");
        let out = self.connect(device_port)?;
        self.wait_for_state(&serial, state, Duration::from_secs(15))
            .map_err(|e| io::Error::new(e.kind(), format!("{e} (adb connect said: {out})")))?;
        Ok(serial)
    }
}

impl Drop for AdbServer {
    fn drop(&mut self) {
        let _ = self.adb(&["kill-server"]);
    }
}
