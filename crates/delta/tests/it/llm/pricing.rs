//! Cost estimates from the built-in price table.

use delta_engine::llm::cost_usd;

fn assert_close(actual: Option<f64>, expected: f64) {
    let actual = actual.expect("a price");
    assert!(
        (actual - expected).abs() < 1e-9,
        "expected {expected}, got {actual}"
    );
}

#[test]
fn known_models_cost_their_list_price() {
    assert_close(cost_usd("gpt-4o", 1_000_000, 1_000_000, None), 12.5);
    assert_close(cost_usd("gpt-4o-mini", 1_000_000, 1_000_000, None), 0.75);
    assert_close(cost_usd("gpt-4.1", 2_000_000, 500_000, None), 8.0);
    assert_close(cost_usd("gpt-5-nano", 1_000_000, 0, None), 0.05);
    assert_close(cost_usd("o4-mini", 1000, 1000, None), 0.0055);
    assert_close(cost_usd("gpt-4o", 0, 0, None), 0.0);
}

#[test]
fn dated_snapshots_cost_what_their_base_model_costs() {
    assert_eq!(
        cost_usd("gpt-4o-2024-08-06", 1234, 567, None),
        cost_usd("gpt-4o", 1234, 567, None)
    );
    assert_eq!(
        cost_usd("gpt-4o-mini-2024-07-18", 1234, 567, None),
        cost_usd("gpt-4o-mini", 1234, 567, None)
    );
    assert_eq!(
        cost_usd("o3-2025-04-16", 10, 20, None),
        cost_usd("o3", 10, 20, None)
    );
    // The first gpt-4o snapshot has its own, higher price.
    assert_close(
        cost_usd("gpt-4o-2024-05-13", 1_000_000, 1_000_000, None),
        20.0,
    );
}

#[test]
fn unknown_models_have_no_price() {
    assert_eq!(cost_usd("llama3.1:8b", 100, 100, None), None);
    assert_eq!(cost_usd("gpt-4o-custom", 100, 100, None), None);
    assert_eq!(cost_usd("", 100, 100, None), None);
}

#[test]
fn an_override_wins_for_known_and_unknown_models() {
    assert_close(
        cost_usd("llama3.1:8b", 2_000_000, 1_000_000, Some((0.5, 1.5))),
        2.5,
    );
    assert_close(cost_usd("gpt-4o", 1_000_000, 0, Some((1.0, 2.0))), 1.0);
    assert_close(cost_usd("local", 5, 5, Some((0.0, 0.0))), 0.0);
}
