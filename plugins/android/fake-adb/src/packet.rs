//! ADB transport messages: the 24-byte little-endian header (command,
//! arg0, arg1, payload length, payload checksum, magic) and its payload.

use std::io::{self, Read, Write};

/// `CNXN(version, maxdata, "system-identity")`.
pub(crate) const A_CNXN: u32 = u32::from_le_bytes(*b"CNXN");
/// `AUTH(type, 0, data)`.
pub(crate) const A_AUTH: u32 = u32::from_le_bytes(*b"AUTH");
/// `OPEN(local-id, 0, "destination\0")`.
pub(crate) const A_OPEN: u32 = u32::from_le_bytes(*b"OPEN");
/// `OKAY(local-id, remote-id)`.
pub(crate) const A_OKAY: u32 = u32::from_le_bytes(*b"OKAY");
/// `CLSE(local-id, remote-id)`.
pub(crate) const A_CLSE: u32 = u32::from_le_bytes(*b"CLSE");
/// `WRTE(local-id, remote-id, data)`.
pub(crate) const A_WRTE: u32 = u32::from_le_bytes(*b"WRTE");

/// The original protocol version: payloads carry a byte-sum checksum.
pub const A_VERSION_MIN: u32 = 0x0100_0000;
/// From this version on, receivers skip checksum verification.
pub const A_VERSION_SKIP_CHECKSUM: u32 = 0x0100_0001;

/// AUTH type: the device's random token the host must sign.
pub(crate) const AUTH_TOKEN: u32 = 1;
/// AUTH type: the host's signature of the token.
pub(crate) const AUTH_SIGNATURE: u32 = 2;
/// AUTH type: the host's public key, offered when no signature was
/// accepted.
pub(crate) const AUTH_RSAPUBLICKEY: u32 = 3;

/// The largest payload this fake ever accepts, whatever was negotiated.
pub(crate) const HARD_PAYLOAD_LIMIT: usize = 1024 * 1024;

/// A malformed message.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PacketError {
    /// Reading failed, or the peer closed the connection mid-message.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    /// The header's magic word is not the command's bitwise complement.
    #[error("bad magic {magic:#010x} for command {command:#010x}")]
    BadMagic { command: u32, magic: u32 },
    /// The header announces a payload (bytes) above [`HARD_PAYLOAD_LIMIT`].
    #[error("payload of {0} bytes exceeds the limit")]
    TooLarge(usize),
    /// The payload's byte sum differs from the header's (checked only
    /// while the peer speaks [`A_VERSION_MIN`]).
    #[error("payload checksum {actual:#x} does not match header {expected:#x}")]
    BadChecksum { expected: u32, actual: u32 },
}

/// One ADB message.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Packet {
    /// One of the `A_*` commands.
    pub(crate) command: u32,
    /// The first argument (its meaning depends on the command).
    pub(crate) arg0: u32,
    /// The second argument.
    pub(crate) arg1: u32,
    /// The data; at most the negotiated maximum payload.
    pub(crate) payload: Vec<u8>,
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
pub(crate) fn command_name(command: u32) -> String {
    let bytes = command.to_le_bytes();
    if bytes.iter().all(u8::is_ascii_uppercase) {
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        format!("{command:#010x}")
    }
}

/// The byte-sum checksum of the original protocol.
pub(crate) fn checksum(payload: &[u8]) -> u32 {
    payload
        .iter()
        .fold(0u32, |sum, b| sum.wrapping_add(u32::from(*b)))
}

impl Packet {
    /// A message with the given header fields and payload.
    pub(crate) fn new(command: u32, arg0: u32, arg1: u32, payload: impl Into<Vec<u8>>) -> Self {
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
    pub(crate) fn encode(&self) -> Vec<u8> {
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
    pub(crate) fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.encode())?;
        w.flush()
    }

    /// Reads one message. `verify_checksum` is true while the peer speaks
    /// the original protocol version.
    pub(crate) fn read_from(r: &mut impl Read, verify_checksum: bool) -> Result<Self, PacketError> {
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
