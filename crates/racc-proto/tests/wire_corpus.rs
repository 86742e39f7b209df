//! Replays the wire fuzz corpus (`fuzz/corpus/wire`: what `cargo fuzz run wire` kept) through
//! every parser on the stable toolchain, as the fuzz target does: no input panics, and what a
//! parser accepts round-trips (`racc_proto::wire::selfcheck::check`).

#[test]
fn every_corpus_input_parses_or_errs_without_panicking() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/wire");
    let mut inputs = 0;
    for entry in std::fs::read_dir(dir).expect("the wire fuzz corpus") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        racc_proto::wire::selfcheck::check(&bytes);
        inputs += 1;
    }
    assert!(inputs >= 20, "the corpus has only {inputs} inputs");
}
