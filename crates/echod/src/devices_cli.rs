//! `echod devices …`: devices that reach `echod serve` with tokens of their own. `pair`
//! makes a one-time code (with the address to open and its QR code when the server's address
//! is known), `list` shows every device and when it was last seen, `revoke` shuts one out,
//! `log` shows the sign-in log (pairings, wrong codes, revocations, and from where).
//! Each command sends its operation's request through `Api::call`.

use crate::print::{self, Text};
use clap::Subcommand;
use echo_agent::wire::{
    AccessEvent, AccessEventKind, Device, DevicePairing, DeviceState, ListAccessEvents,
    ListDevices, PairDevice, RevokeDevice,
};
use echo_agent::{Api, PAIRING_MINUTES};
use std::io::Write;

#[derive(Debug, Subcommand)]
pub enum DevicesCommand {
    /// Make a one-time code that pairs a device (good for a few minutes).
    Pair {
        /// What to call the device.
        #[arg(long)]
        name: Option<String>,
        /// The server's address as the device reaches it, e.g. `https://mybox.lan:8443`
        /// (default: the one the running `echod serve` printed).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List paired devices, waiting pairings and revoked devices.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a device: its token opens nothing from now on.
    Revoke {
        /// The device's id (from `echod devices list`).
        id: String,
    },
    /// The sign-in log, newest first: pairings, wrong codes, revocations, and from where.
    Log {
        /// At most this many entries.
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one devices command.
pub async fn run(api: &Api, command: DevicesCommand) -> anyhow::Result<()> {
    match command {
        DevicesCommand::Pair { name, url, json } => {
            let pairing = api.call(PairDevice { name }).await?;
            if json {
                return print::json(&pairing);
            }
            let url = url.or_else(|| {
                let file = api.config().home.join(crate::serve::ADDRESS_FILE);
                let text = std::fs::read_to_string(file).ok()?;
                Some(text.trim().to_string()).filter(|t| !t.is_empty())
            });
            let mut out = std::io::stdout().lock();
            pairing_text(&pairing, url.as_deref(), &mut out)?;
            Ok(())
        }
        DevicesCommand::List { json } => print::call(api, ListDevices {}, json).await,
        DevicesCommand::Revoke { id } => print::call(api, RevokeDevice { id }, false).await,
        DevicesCommand::Log { limit, json } => {
            let limit = Some(limit);
            print::call(api, ListAccessEvents { limit }, json).await
        }
    }
}

/// A pairing for people: the code, and with the server's `url` the address to open and its
/// QR code.
fn pairing_text(
    pairing: &DevicePairing,
    url: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "pairing code for {:?}: {} (works once, for {PAIRING_MINUTES} minutes)",
        pairing.device.name, pairing.code
    )?;
    let Some(url) = url else {
        writeln!(
            out,
            "on the device, open the address `echod serve` printed with #pair={} after it",
            pairing.code
        )?;
        return Ok(());
    };
    let address = format!("{}/#pair={}", url.trim_end_matches('/'), pairing.code);
    writeln!(out, "on the device, open: {address}")?;
    match qrcode::QrCode::new(address.as_bytes()) {
        Ok(code) => {
            let image = code
                .render::<qrcode::render::unicode::Dense1x2>()
                .dark_color(qrcode::render::unicode::Dense1x2::Light)
                .light_color(qrcode::render::unicode::Dense1x2::Dark)
                .build();
            writeln!(out, "{image}")?;
        }
        Err(e) => writeln!(out, "(no QR code: {e})")?,
    }
    Ok(())
}

impl Text for Device {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let when = match self.state {
            DeviceState::Waiting => format!(
                "waiting for its code until {}",
                self.code_expires_at.as_deref().unwrap_or("?")
            ),
            DeviceState::Paired => format!(
                "paired {}, last seen {}",
                self.paired_at.as_deref().unwrap_or("?"),
                self.last_seen_at.as_deref().unwrap_or("never")
            ),
            DeviceState::Revoked => {
                format!("revoked {}", self.revoked_at.as_deref().unwrap_or("?"))
            }
        };
        writeln!(out, "{}  {:?}  {}  {when}", self.id, self.name, self.state)
    }
}

impl Text for Vec<Device> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no devices yet (echod devices pair)")?;
        }
        self.iter().try_for_each(|d| d.text(out))
    }
}

impl Text for Vec<AccessEvent> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no sign-ins yet")?;
        }
        for e in self {
            let what = match e.kind {
                AccessEventKind::PairingStarted => "pairing code made",
                AccessEventKind::Paired => "device paired",
                AccessEventKind::PagePaired => "browser page paired",
                AccessEventKind::WrongCode => "wrong pairing code",
                AccessEventKind::CodesLocked => "too many wrong codes: codes refused for a minute",
                AccessEventKind::Revoked => "device revoked",
            };
            let device = match (&e.device_name, &e.device_id) {
                (Some(name), Some(id)) => format!("  {name:?} ({id})"),
                _ => String::new(),
            };
            let peer = e.peer.as_deref().map(|p| format!("  from {p}"));
            writeln!(out, "{}  {what}{device}{}", e.at, peer.unwrap_or_default())?;
        }
        Ok(())
    }
}
