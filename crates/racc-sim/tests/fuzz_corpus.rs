//! Replays the scenario fuzz corpus (`fuzz/corpus/scenario`: the shipped scenarios, hand-written
//! edge cases and what `cargo fuzz run scenario` kept) through the parser and validator on the
//! stable toolchain, as the fuzz target does: every input gives a checked scenario (which then
//! builds its simulator) or an error naming the file, never a panic, and quickly (issue 12,
//! item 11).

use racc_sim::scenario::{from_json, from_toml};
use racc_sim::Simulator;
use std::time::{Duration, Instant};

#[test]
fn every_corpus_input_gives_a_scenario_or_a_clear_error() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/scenario");
    let mut inputs = 0;
    let mut accepted = 0;
    for entry in std::fs::read_dir(dir).expect("the fuzz corpus") {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let Ok(text) = std::str::from_utf8(&bytes) else { continue };
        let t = Instant::now();
        for (result, source) in [(from_toml(text, "c.toml"), "c.toml"), (from_json(text, "c.json"), "c.json")] {
            match result {
                Ok(spec) => {
                    accepted += 1;
                    let _ = Simulator::new(spec);
                }
                Err(e) => {
                    assert_eq!(e.source, source, "{}", path.display());
                    assert!(!e.reason.trim().is_empty(), "{}: an error without a reason", path.display());
                }
            }
        }
        assert!(t.elapsed() < Duration::from_secs(2), "{} took {:?}", path.display(), t.elapsed());
        inputs += 1;
    }
    assert!(inputs >= 20, "{inputs} corpus inputs");
    assert!(accepted >= 10, "the corpus must hold valid scenarios too: {accepted} accepted");
}
