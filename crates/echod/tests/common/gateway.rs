//! `echod serve` as a real process on loopback, with a raw HTTP/1.1 client that controls
//! every header (the gateway tests send hostile ones on purpose), over TLS when the server
//! was started with its local certificate authority.

use super::World;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls;

/// A connection to the server: plain TCP, or TLS over it.
pub trait Conn: Read + Write + Send {}
impl<T: Read + Write + Send> Conn for T {}

pub struct Server {
    pub child: Child,
    pub port: u16,
    pub token: String,
    _work: tempfile::TempDir,
    /// What the server printed after its first line, line by line.
    stdout: std::sync::Mutex<std::sync::mpsc::Receiver<String>>,
    /// How to speak TLS to it (trusting its local CA), when it serves TLS.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(w: &World) -> Server {
        Server::start_with(w, &[])
    }

    pub fn start_with(w: &World, extra: &[&str]) -> Server {
        let mut args = vec!["serve"];
        args.extend_from_slice(extra);
        Server::start_command(w, w.command(&args))
    }

    pub fn start_command(w: &World, command: std::process::Command) -> Server {
        Server::start_logging(w, command, Stdio::inherit())
    }

    /// Starts `command` with its log (stderr) going to `log`.
    pub fn start_logging(w: &World, mut command: std::process::Command, log: Stdio) -> Server {
        let work = tempfile::tempdir().expect("tempdir");
        let mut child = command
            .current_dir(work.path())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn echod serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        stdout.read_line(&mut first).expect("first line");
        let port: u16 = first
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        assert!(
            first.starts_with("echod serve listening on http"),
            "{first}"
        );
        // The rest of stdout is read all along, so the server never blocks on a full pipe.
        let (lines, stdout_lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let token = std::fs::read_to_string(w.home.path().join("serve-token"))
            .expect("token file")
            .trim()
            .to_string();
        Server {
            child,
            port,
            token,
            _work: work,
            stdout: std::sync::Mutex::new(stdout_lines),
            tls: None,
        }
    }

    /// `echod serve` on loopback over TLS with the data directory's local CA, trusted by
    /// this client (which names the server `localhost`).
    pub fn start_tls(w: &World, extra: &[&str]) -> Server {
        let mut args = vec!["--listen", "127.0.0.1:0", "--tls-local-ca"];
        args.extend_from_slice(extra);
        let mut server = Server::start_with(w, &args);
        server.tls = Some(trusting(&w.home.path().join("tls/ca.pem")));
        server
    }

    /// A connection to the server (TLS when it serves TLS), with a 60 s read timeout.
    pub fn connect(&self) -> Box<dyn Conn> {
        let tcp = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        tcp.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        match &self.tls {
            None => Box::new(tcp),
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
                let conn = rustls::ClientConnection::new(config.clone(), name).expect("TLS");
                Box::new(rustls::StreamOwned::new(conn, tcp))
            }
        }
    }

    /// The next line the server prints, waited for up to 30 s.
    pub fn next_line(&self) -> String {
        self.stdout
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv_timeout(Duration::from_secs(30))
            .expect("echod serve printed no further line within 30 s")
    }

    pub fn work(&self) -> &std::path::Path {
        self._work.path()
    }

    /// One HTTP/1.1 request with full control of the headers; returns status and body.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, String) {
        let mut stream = self.connect();
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !body.is_empty() {
            req.push_str("Content-Type: application/json\r\n");
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(&body);
        stream.write_all(req.as_bytes()).expect("send");
        let mut text = String::new();
        read_to_close(&mut stream, &mut text);
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// Starts a turn and returns the open event stream (read it line by line).
    pub fn stream_turn(&self, session: &str, input: &str) -> BufReader<Box<dyn Conn>> {
        let mut stream = self.connect();
        let body = json!({ "session": session, "input": input }).to_string();
        write!(
            stream,
            "POST /api/turns HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.host(),
            self.bearer(),
            body.len()
        )
        .expect("send");
        BufReader::new(stream)
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        self.raw(
            "GET",
            path,
            &[("Host", &self.host()), ("Authorization", &self.bearer())],
            None,
        )
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, String) {
        self.raw(
            "POST",
            path,
            &[("Host", &self.host()), ("Authorization", &self.bearer())],
            Some(body),
        )
    }
}

impl Server {
    pub fn put(&self, path: &str, body: &Value) -> (u16, String) {
        self.raw(
            "PUT",
            path,
            &[("Host", &self.host()), ("Authorization", &self.bearer())],
            Some(body),
        )
    }

    /// Runs a turn (optionally replacing from a message) and returns its events.
    pub fn turn_events(&self, body: &Value) -> Vec<Value> {
        let (status, text) = self.post("/api/turns", body);
        assert_eq!(status, 200, "{text}");
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// Reads what the server sends until it closes. A TLS server may close without a
/// `close_notify`: what came before is the answer.
pub fn read_to_close(stream: &mut dyn Read, text: &mut String) {
    let mut bytes = Vec::new();
    if let Err(e) = stream.read_to_end(&mut bytes) {
        assert!(
            e.kind() == std::io::ErrorKind::UnexpectedEof && !bytes.is_empty(),
            "read: {e}"
        );
    }
    text.push_str(&String::from_utf8_lossy(&bytes));
}

/// A TLS client trusting the certificate authority in `ca` (PEM) and nothing else.
pub fn trusting(ca: &std::path::Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_file(ca).expect("the CA's certificate");
    roots.add(ca).expect("a CA certificate");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}
