//! ADB transport messages: the 24-byte little-endian header (command,
//! arg0, arg1, payload length, payload checksum, magic) and its payload.

use std::io::{self, Read, Write};

/// `CNXN(version, maxdata, "system-identity")`.
pub const A_CNXN: u32 = u32::from_le_bytes(*b"CNXN");
/// `AUTH(type, 0, data)`.
pub const A_AUTH: u32 = u32::from_le_bytes(*b"AUTH");
/// `OPEN(local-id, 0, "destination\0")`.
pub const A_OPEN: u32 = u32::from_le_bytes(*b"OPEN");
/// `OKAY(local-id, remote-id)`.
pub const A_OKAY: u32 = u32::from_le_bytes(*b"OKAY");
/// `CLSE(local-id, remote-id)`.
pub const A_CLSE: u32 = u32::from_le_bytes(*b"CLSE");
/// `WRTE(local-id, remote-id, data)`.
pub const A_WRTE: u32 = u32::from_le_bytes(*b"WRTE");
/// `STLS(type, version)`.
pub const A_STLS: u32 = u32::from_le_bytes(*b"STLS");
/// `SYNC` (obsolete).
pub const A_SYNC: u32 = u32::from_le_bytes(*b"SYNC");

/// The original protocol version: payloads carry a byte-sum checksum.
pub const A_VERSION_MIN: u32 = 0x0100_0000;
/// From this version on, receivers skip checksum verification.
pub const A_VERSION_SKIP_CHECKSUM: u32 = 0x0100_0001;

/// AUTH types.
pub const AUTH_TOKEN: u32 = 1;
pub const AUTH_SIGNATURE: u32 = 2;
pub const AUTH_RSAPUBLICKEY: u32 = 3;

/// The largest payload this fake ever accepts, whatever was negotiated.
pub const HARD_PAYLOAD_LIMIT: usize = 1024 * 1024;

/// A malformed message.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    #[error("bad magic {magic:#010x} for command {command:#010x}")]
    BadMagic { command: u32, magic: u32 },
    #[error("payload of {0} bytes exceeds the limit")]
    TooLarge(usize),
    #[error("payload checksum {actual:#x} does not match header {expected:#x}")]
    BadChecksum { expected: u32, actual: u32 },
}

/// One ADB message.
#[derive(Clone, PartialEq, Eq)]
pub struct Packet {
    pub command: u32,
    pub arg0: u32,
    pub arg1: u32,
    pub payload: Vec<u8>,
}

impl std::fmt::Debug for Packet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}({:#x}, {:#x}, {} bytes)",
            command_name(self.command),
            self.arg0,
            self.arg1,
            self.payload.len()
        )
    }
}

/// The four-letter name of a command.
pub fn command_name(command: u32) -> String {
    let bytes = command.to_le_bytes();
    if bytes.iter().all(u8::is_ascii_uppercase) {
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        format!("{command:#010x}")
    }
}

/// The byte-sum checksum of the original protocol.
pub fn checksum(payload: &[u8]) -> u32 {
    payload
        .iter()
        .fold(0u32, |sum, b| sum.wrapping_add(u32::from(*b)))
}

impl Packet {
    pub fn new(command: u32, arg0: u32, arg1: u32, payload: impl Into<Vec<u8>>) -> Self {
        Self {
            command,
            arg0,
            arg1,
            payload: payload.into(),
        }
    }

    /// The header and payload as sent on the wire. The checksum is always
    /// filled in: peers of the original version verify it, newer ones
    /// ignore it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.payload.len());
        let len = u32::try_from(self.payload.len()).unwrap_or(u32::MAX);
        for word in [
            self.command,
            self.arg0,
            self.arg1,
            len,
            checksum(&self.payload),
            self.command ^ 0xffff_ffff,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.payload);
        out
    }

    /// Writes the message in one `write_all`.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.encode())?;
        w.flush()
    }

    /// Reads one message. `verify_checksum` is true while the peer speaks
    /// the original protocol version.
    pub fn read_from(r: &mut impl Read, verify_checksum: bool) -> Result<Self, PacketError> {
        let mut header = [0u8; 24];
        r.read_exact(&mut header)?;
        let word = |i: usize| {
            u32::from_le_bytes([
                header[i * 4],
                header[i * 4 + 1],
                header[i * 4 + 2],
                header[i * 4 + 3],
            ])
        };
        let (command, arg0, arg1, len, check, magic) =
            (word(0), word(1), word(2), word(3), word(4), word(5));
        if magic != command ^ 0xffff_ffff {
            return Err(PacketError::BadMagic { command, magic });
        }
        let len = len as usize;
        if len > HARD_PAYLOAD_LIMIT {
            return Err(PacketError::TooLarge(len));
        }
        let mut payload = vec![0u8; len];
        r.read_exact(&mut payload)?;
        if verify_checksum {
            let actual = checksum(&payload);
            if actual != check {
                return Err(PacketError::BadChecksum {
                    expected: check,
                    actual,
                });
            }
        }
        Ok(Self {
            command,
            arg0,
            arg1,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_checksum_and_magic() {
        let p = Packet::new(A_WRTE, 7, 9, b"hello".to_vec());
        let bytes = p.encode();
        assert_eq!(&bytes[0..4], b"WRTE");
        assert_eq!(
            u32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]),
            A_WRTE ^ 0xffff_ffff
        );
        let back = Packet::read_from(&mut bytes.as_slice(), true).expect("decodes");
        assert_eq!(back, p);
    }

    #[test]
    fn bad_magic_and_checksum_are_refused() {
        let mut bytes = Packet::new(A_OKAY, 1, 2, Vec::new()).encode();
        bytes[20] ^= 1;
        assert!(matches!(
            Packet::read_from(&mut bytes.as_slice(), false),
            Err(PacketError::BadMagic { .. })
        ));
        let mut bytes = Packet::new(A_WRTE, 1, 2, b"abc".to_vec()).encode();
        bytes[16] ^= 1;
        assert!(matches!(
            Packet::read_from(&mut bytes.as_slice(), true),
            Err(PacketError::BadChecksum { .. })
        ));
        assert!(Packet::read_from(&mut bytes.as_slice(), false).is_ok());
    }
}
