//! Deficit round robin over the sub-queues (Shreedhar & Varghese, "Efficient Fair Queueing using
//! Deficit Round Robin", SIGCOMM 1995): each sub-queue, in turn, adds its quantum to its deficit
//! and sends head packets while the deficit covers them. Backlogged sub-queues then share the
//! link in proportion to their quanta, whatever their packet sizes, at O(1) work per packet; a
//! sub-queue with nothing to send forfeits its turn and its deficit, so the scheduler is
//! work-conserving (an idle sub-queue's share goes to the other).

/// The scheduler's state: the quanta (bytes), each sub-queue's deficit, whose turn it is and
/// whether that turn's quantum has been added yet.
#[derive(Clone, Debug)]
pub struct Drr {
    quantum: Vec<f64>,
    deficit: Vec<f64>,
    turn: usize,
    fresh: bool,
}

impl Drr {
    /// Quanta in proportion to `weights` (all > 0), the smallest being `quantum_bytes` (at least a
    /// full-size packet, so that every turn sends something: DRR's O(1) condition).
    pub fn new(weights: &[f64], quantum_bytes: f64) -> Drr {
        let min = weights.iter().cloned().fold(f64::INFINITY, f64::min);
        Drr {
            quantum: weights.iter().map(|w| quantum_bytes * w / min).collect(),
            deficit: vec![0.0; weights.len()],
            turn: 0,
            fresh: true,
        }
    }

    pub fn quanta(&self) -> &[f64] {
        &self.quantum
    }

    /// The sub-queue whose head goes next: `heads[i]` is sub-queue i's head size, `None` if it is
    /// empty (at least one is not). Its deficit is charged the head's size.
    pub fn pick(&mut self, heads: &[Option<u32>]) -> usize {
        debug_assert!(heads.iter().any(Option::is_some), "DRR asked to pick among empty sub-queues");
        // An empty sub-queue keeps no deficit (DRR: reset when it empties).
        for (d, h) in self.deficit.iter_mut().zip(heads) {
            if h.is_none() {
                *d = 0.0;
            }
        }
        loop {
            let i = self.turn;
            if let Some(size) = heads[i] {
                if self.fresh {
                    self.deficit[i] += self.quantum[i];
                    self.fresh = false;
                }
                if self.deficit[i] >= size as f64 {
                    self.deficit[i] -= size as f64;
                    return i;
                }
            }
            self.turn = (i + 1) % heads.len();
            self.fresh = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serve `n` packets from always-backlogged sub-queues of the given packet sizes; bytes
    /// sent per sub-queue.
    fn serve(drr: &mut Drr, sizes: &[u32], n: usize) -> Vec<f64> {
        let heads: Vec<Option<u32>> = sizes.iter().map(|&s| Some(s)).collect();
        let mut sent = vec![0.0; sizes.len()];
        for _ in 0..n {
            let i = drr.pick(&heads);
            sent[i] += sizes[i] as f64;
        }
        sent
    }

    #[test]
    fn quanta_follow_the_weights_with_the_smallest_one_full_packet() {
        let d = Drr::new(&[0.25, 0.75], 1500.0);
        assert_eq!(d.quanta(), &[1500.0, 4500.0]);
    }

    #[test]
    fn backlogged_sub_queues_share_bytes_by_weight_whatever_their_packet_sizes() {
        // Weights 0.3 / 0.7, 1024-byte against 40-byte packets: within one round's quanta
        // (1500 + 3500 bytes) of 30 % / 70 % after 200 000 packets.
        let mut d = Drr::new(&[0.3, 0.7], 1500.0);
        let sent = serve(&mut d, &[1024, 40], 200_000);
        let share = sent[0] / (sent[0] + sent[1]);
        assert!((share - 0.3).abs() < 5000.0 / (sent[0] + sent[1]), "share {share}");
        // Equal weights, equal sizes: strict alternation of whole quanta.
        let mut d = Drr::new(&[0.5, 0.5], 1000.0);
        let order: Vec<usize> = (0..6).map(|_| d.pick(&[Some(1000), Some(1000)])).collect();
        assert_eq!(order, vec![0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn an_empty_sub_queue_gives_its_turn_away_and_keeps_no_deficit() {
        let mut d = Drr::new(&[0.5, 0.5], 1500.0);
        // Only sub-queue 1 has packets: it is served every time (work-conserving).
        for _ in 0..5 {
            assert_eq!(d.pick(&[None, Some(1000)]), 1);
        }
        // Sub-queue 0 was empty all along: it comes back with one quantum, not a saved-up burst.
        let order: Vec<usize> = (0..4).map(|_| d.pick(&[Some(1000), Some(1000)])).collect();
        let zeros = order.iter().filter(|&&i| i == 0).count();
        assert!((1..=2).contains(&zeros), "{order:?}");
    }
}
