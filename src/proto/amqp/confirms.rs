//! Publisher-confirm bookkeeping of one channel: which delivery tags the broker has
//! acknowledged. Acks usually arrive in order (a watermark); single acks above the
//! watermark are kept apart so a later multiple ack never counts a message twice.

#[derive(Clone, Debug, Default)]
pub struct ChannelConfirms {
    /// Delivery tag of the last message published (tags start at 1).
    pub published: u64,
    /// Every tag up to here is settled.
    watermark: u64,
    /// Settled tags above the watermark (out-of-order single acks), unsorted; nearly always empty.
    above: Vec<u64>,
}

impl ChannelConfirms {
    /// Settles `tag` (and with `multiple`, every tag below it); returns how many messages
    /// this settles for the first time, or None for a tag never published.
    pub fn settle(&mut self, tag: u64, multiple: bool) -> Option<u64> {
        if tag == 0 && multiple {
            // The spec's "everything so far".
            return self.settle(self.published, true);
        }
        if tag > self.published || tag == 0 {
            return None;
        }
        if multiple {
            if tag <= self.watermark {
                return Some(0);
            }
            let already = self.above.iter().filter(|&&t| t <= tag).count() as u64;
            self.above.retain(|&t| t > tag);
            let n = tag - self.watermark - already;
            self.watermark = tag;
            self.absorb();
            return Some(n);
        }
        if tag <= self.watermark || self.above.contains(&tag) {
            return Some(0);
        }
        if tag == self.watermark + 1 {
            self.watermark = tag;
            self.absorb();
        } else {
            self.above.push(tag);
        }
        Some(1)
    }

    fn absorb(&mut self) {
        while let Some(i) = self.above.iter().position(|&t| t == self.watermark + 1) {
            self.above.swap_remove(i);
            self.watermark += 1;
        }
    }

    /// Messages published and not settled yet.
    pub fn unsettled(&self) -> u64 {
        self.published - self.watermark - self.above.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_multiple_and_out_of_order_acks_count_each_message_once() {
        let mut c = ChannelConfirms {
            published: 10,
            ..Default::default()
        };
        assert_eq!(c.settle(1, false), Some(1));
        assert_eq!(c.settle(4, false), Some(1));
        assert_eq!(c.settle(6, false), Some(1));
        assert_eq!(c.settle(5, true), Some(3)); // 2, 3, 5 (4 was already)
        assert_eq!(c.unsettled(), 4); // 7..=10
        assert_eq!(c.settle(6, true), Some(0));
        assert_eq!(c.settle(4, false), Some(0));
        assert_eq!(c.settle(11, false), None);
        assert_eq!(c.settle(0, true), Some(4));
        assert_eq!(c.unsettled(), 0);
    }
}
