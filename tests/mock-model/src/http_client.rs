//! A minimal blocking HTTP/1.1 client over `std::net::TcpStream`, enough for
//! [`crate::MockServer`] to talk to its server's `/_mock/*` routes from sync and async
//! tests alike, without an HTTP client dependency.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long one exchange with the mock server may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A response: its status code and its (de-chunked) body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Sends one request with `Connection: close` and reads the whole reply.
pub(crate) fn send(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
) -> io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&address, TIMEOUT)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let body = body.unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_reply(&raw)
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

/// Splits a raw reply into status and body, honouring chunked transfer encoding and
/// `Content-Length`.
fn parse_reply(raw: &[u8]) -> io::Result<Reply> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| invalid("reply has no end of headers"))?;
    let head =
        std::str::from_utf8(&raw[..split]).map_err(|_| invalid("reply head is not UTF-8"))?;
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| invalid("reply has no status line"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        }
    }
    let body = if chunked {
        dechunk(rest)?
    } else {
        match length {
            Some(length) if length <= rest.len() => rest[..length].to_vec(),
            Some(_) => return Err(invalid("reply body is shorter than its Content-Length")),
            None => rest.to_vec(),
        }
    };
    Ok(Reply { status, body })
}

/// Decodes a chunked body.
fn dechunk(mut rest: &[u8]) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| invalid("truncated chunk size"))?;
        let size_text =
            std::str::from_utf8(&rest[..line_end]).map_err(|_| invalid("bad chunk size"))?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        let chunk = rest.get(..size).ok_or_else(|| invalid("truncated chunk"))?;
        body.extend_from_slice(chunk);
        rest = rest
            .get(size + 2..)
            .ok_or_else(|| invalid("truncated chunk"))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_and_chunked_bodies_are_read() {
        let plain = parse_reply(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").expect("valid");
        assert_eq!((plain.status, plain.body.as_slice()), (200, &b"ok"[..]));
        let chunked = b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let chunked = parse_reply(chunked).expect("valid");
        assert_eq!(
            (chunked.status, chunked.body.as_slice()),
            (400, &b"abcde"[..])
        );
    }

    #[test]
    fn truncated_replies_are_errors() {
        assert!(parse_reply(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nok").is_err());
        assert!(
            parse_reply(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab").is_err()
        );
        assert!(parse_reply(b"HTTP/1.1 200 OK\r\n").is_err());
    }
}
