//! The scenario parser and validator on arbitrary input (issue 12, item 11): TOML and JSON
//! alike must give a checked scenario or a clear error, never a panic, a hang or runaway memory;
//! an accepted scenario must also build its simulator (which allocates every flow and port).
//! Run: `cargo +nightly fuzz run scenario fuzz/corpus/scenario -- -max_total_time=600`.
//! The normal test command replays the corpus (crates/racc-sim/tests/fuzz_corpus.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for spec in [racc_sim::scenario::from_toml(text, "fuzz.toml"), racc_sim::scenario::from_json(text, "fuzz.json")] {
        if let Ok(spec) = spec {
            let _ = racc_sim::Simulator::new(spec);
        }
    }
});
