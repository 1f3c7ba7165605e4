//! What an AMQP run adds to the shared result, as its `amqp` block: connection rate,
//! handshake latency and message figures counted from the broker's confirms (or,
//! without confirms, from the publishes written).

use crate::stats::latency::LatencySummary;
use crate::stats::result::HistogramBlob;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AmqpFigures {
    /// "churn" (connect, handshake, publish N, close, repeat) or "publish".
    pub mode: String,
    pub confirm: bool,
    /// What a counted message is: "confirmed by the broker" or, without confirms,
    /// "written, then a clean close (no confirms)": written on a connection that then
    /// ended with Connection.Close answered by CloseOk.
    pub counted_from: String,
    /// Connections that completed the handshake, and (churn mode only: publish mode
    /// opens its connections once) their rate over the measured phase.
    pub handshakes: u64,
    pub connections_per_s: Option<f64>,
    /// Connection.Close answered by CloseOk.
    pub clean_closes: u64,
    pub messages: u64,
    pub nacked: u64,
    /// Body bytes of the counted messages.
    pub payload_bytes: u64,
    pub msgs_per_s: f64,
    pub payload_mb_per_s: f64,
    /// Connect to ready-to-publish (TCP, TLS, AMQP handshake, channels, confirm mode), microseconds.
    /// Null when no handshake completed in the measured phase.
    #[serde(with = "crate::stats::latency::null_when_empty")]
    pub handshake_latency_us: LatencySummary,
    pub handshake_histogram: HistogramBlob,
    /// The first Connection.Close or Channel.Close the broker sent, if any.
    pub broker_close: Option<String>,
}

impl AmqpFigures {
    /// The name of its block in the result.
    pub const BLOCK: &'static str = "amqp";
}
