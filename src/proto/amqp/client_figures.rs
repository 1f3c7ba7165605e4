//! The AMQP client's own figures, per worker and phase, merged exactly: clean closes
//! (Connection.Close answered by CloseOk), nacked messages, and the first close the
//! broker sent (for the report).

use crate::stats::Figures;

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientFigures {
    pub clean_closes: u64,
    pub nacked: u64,
    /// The first Connection.Close or Channel.Close the broker sent.
    pub broker_close: Option<String>,
}

impl ClientFigures {
    /// Keeps the first close text only: once per connection at most, never per message.
    pub fn note_broker_close(&mut self, text: &str) {
        if self.broker_close.is_none() {
            self.broker_close = Some(text.to_string());
        }
    }
}

impl Figures for ClientFigures {
    fn merge(&mut self, o: &Self) {
        self.clean_closes += o.clean_closes;
        self.nacked += o.nacked;
        if self.broker_close.is_none() {
            self.broker_close = o.broker_close.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_sums_and_keeps_the_first_close() {
        let mut a = ClientFigures {
            clean_closes: 2,
            ..Default::default()
        };
        let mut b = ClientFigures {
            nacked: 3,
            ..Default::default()
        };
        b.note_broker_close("x");
        b.note_broker_close("y");
        a.merge(&b);
        a.merge(&ClientFigures {
            broker_close: Some("z".into()),
            ..Default::default()
        });
        assert_eq!((a.clean_closes, a.nacked), (2, 3));
        assert_eq!(a.broker_close.as_deref(), Some("x"));
    }
}
