//! [`Share`]: a config value between 0 (exclusive) and 1 (inclusive).

use serde::Deserialize;

/// A share between 0 (exclusive) and 1 (inclusive); anything else is a config error naming
/// the key.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct Share(pub(super) f64);

impl Share {
    /// `value` if it is in (0, 1].
    pub fn new(value: f64) -> Option<Share> {
        (value > 0.0 && value <= 1.0).then_some(Share(value))
    }

    /// The share as a number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Share {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(d)?;
        Share::new(value).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{value} is not a share: give a number above 0 and at most 1"
            ))
        })
    }
}
