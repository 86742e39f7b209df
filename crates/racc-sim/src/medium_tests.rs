use super::*;

fn dcf() -> DcfSpec {
    DcfSpec {
        slot: 20_000,
        sifs: 10_000,
        difs: 50_000,
        phy_header: 192_000,
        ack: 304_000,
        mac_overhead: 28,
        cw_min: 31,
        cw_max: 1023,
        retry_limit: 7,
    }
}

/// (1000 + 28) B × 8 / 11 Mb/s = 747 636.36 ns, rounded up; 40 B ACK-sized packets:
/// 68 B × 8 / 11 Mb/s = 49 454.5 ns → 49 455 ns.
#[test]
fn data_airtime_by_hand() {
    let m = Medium::new("w".into(), dcf(), 11e6, 1_000, Vec::new());
    assert_eq!(m.data_ns(1000), 747_637);
    assert_eq!(m.data_ns(40), 49_455);
    // At 1 Mb/s every byte is 8 µs.
    let m = Medium::new("w".into(), dcf(), 1e6, 1_000, Vec::new());
    assert_eq!(m.data_ns(1000), 1028 * 8_000);
}

/// A member that starts contending counts from the first slot boundary at least DIFS after
/// it: at once from slot 0 if the channel's DIFS is still running, else on the slot grid.
#[test]
fn countdowns_start_on_the_slot_grid_after_difs() {
    let mut m = Medium::new("w".into(), dcf(), 11e6, 0, Vec::new());
    m.busy_until = 1_000_000;
    m.origin = 1_050_000;
    assert_eq!(m.slot_at(900_000), 0, "during the transmission: from slot 0");
    assert_eq!(m.slot_at(1_000_000), 0, "as it ends: its DIFS is the channel's");
    assert_eq!(m.slot_at(1_000_001), 1, "1 ns later: misses slot 0");
    assert_eq!(m.slot_at(1_020_000), 1);
    assert_eq!(m.slot_at(1_020_001), 2);
    assert_eq!(m.slot_at(2_000_000), 50, "idle for a while: (2 ms + DIFS - origin) / slot");
}
