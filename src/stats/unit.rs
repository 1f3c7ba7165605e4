//! What a protocol counts, in its own words. The engine counts "requests" and "ok";
//! a user reads requests for HTTP, messages for echo, publishes for AMQP, and a
//! publish without confirms counts once written: it has no reply, hence no latency
//! and no received bytes. Reports take their words and their "n/a" from here.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Unit {
    /// What one counted item is, plural: "requests", "messages", "publishes".
    pub noun: String,
    /// What made it count: "answered", "echoed", "written", "confirmed".
    pub counted: String,
    /// Whether a counted item has a reply to time and to count bytes of.
    pub replies: bool,
}

impl Unit {
    pub fn new(noun: &str, counted: &str, replies: bool) -> Self {
        Unit {
            noun: noun.to_string(),
            counted: counted.to_string(),
            replies,
        }
    }

    /// "requests/s".
    pub fn per_s(&self) -> String {
        format!("{}/s", self.noun)
    }

    /// The singular for per-item figures: "request", "message", "publish".
    pub fn one(&self) -> &str {
        self.noun
            .strip_suffix("es")
            .filter(|s| s.ends_with("sh") || s.ends_with("ch") || s.ends_with('s'))
            .or_else(|| self.noun.strip_suffix('s'))
            .unwrap_or(&self.noun)
    }
}

/// Results written before the unit was recorded counted echoed messages.
impl Default for Unit {
    fn default() -> Self {
        Unit::new("messages", "echoed", true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singular_forms() {
        assert_eq!(Unit::new("publishes", "written", false).one(), "publish");
        assert_eq!(Unit::new("requests", "answered", true).one(), "request");
        assert_eq!(Unit::new("messages", "echoed", true).one(), "message");
        assert_eq!(
            Unit::new("requests", "answered", true).per_s(),
            "requests/s"
        );
    }
}
