//! `delta eval report` and `delta eval compare` on two fixed result sets
//! (`results/a`, `results/b`): every statistic against its value worked by hand.

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::snapshot::snapshot;

fn results(name: &str) -> String {
    format!(
        "{}/tests/it/eval/results/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn close(actual: &Value, expected: f64) {
    let actual = actual
        .as_f64()
        .unwrap_or_else(|| panic!("{actual} is a number"));
    assert!(
        (actual - expected).abs() < 1e-9,
        "{actual} is not {expected} to 1e-9"
    );
}

/// Eval A, 4 tasks × 2 attempts: alpha [1, 0], beta [1, 1], gamma [0, errored], delta
/// [0.5, errored].
#[test]
fn report_json_of_a_fixed_results_file_matches_hand_values() {
    let run = Test::new()
        .args(["eval", "report", &results("a"), "--format", "json"])
        .run()
        .code(0);
    let r: Value = serde_json::from_str(run.stdout()).expect("one JSON object");
    assert_eq!(
        (
            &r["trials"],
            &r["passed"],
            &r["failed"],
            &r["errored"],
            &r["pending"]
        ),
        (&8.into(), &3.into(), &3.into(), &2.into(), &0.into())
    );
    assert_eq!(r["clustered"], true);
    // Errored as 0: rewards [1,0], [1,1], [0,0], [0.5,0]; N = 8, mean 3.5/8. Deviation
    // sums by task: 0.125, 1.125, −0.875, −0.375; Σ² = 35/16; G = 4:
    // SE = √(4/3 · 35/16)/8 = √(35/12)/8; t(0.975, 3) = 3.182446305284263.
    close(&r["mean_reward"], 0.4375);
    let se = (35.0f64 / 12.0).sqrt() / 8.0;
    close(&r["stderr"], se);
    let t = 3.182446305284263;
    close(&r["ci95"][0], 0.4375 - t * se);
    close(&r["ci95"][1], 0.4375 + t * se);
    // Inspect AI 0.3.285 gives the same: 0.21347814095749162, [-0.2418827209490031,
    // 1.116882720949003].
    close(&r["stderr"], 0.21347814095749162);
    close(&r["ci95"][0], -0.2418827209490031);
    // Verified only: [1,0], [1,1], [0], [0.5]; N = 6, mean 3.5/6. Deviation sums −1/6,
    // 5/6, −7/12, −1/12; Σ² = 154/144; SE = √(4/3 · 154/144)/6.
    close(&r["mean_reward_verified"], 3.5 / 6.0);
    let se_v = (154.0f64 / 108.0).sqrt() / 6.0;
    close(&r["stderr_verified"], se_v);
    close(&r["ci95_verified"][1], 3.5 / 6.0 + t * se_v);
    // pass@k with errored as failures: (n, c) = (2,1), (2,2), (2,0), (2,0).
    // pass@1 = (1/2 + 1 + 0 + 0)/4; pass@2 = (1 + 1 + 0 + 0)/4; pass^2 = (0 + 1 + 0 + 0)/4.
    close(&r["pass_at_k"]["1"], 0.375);
    close(&r["pass_at_k"]["2"], 0.5);
    close(&r["pass_hat_k"]["1"], 0.375);
    close(&r["pass_hat_k"]["2"], 0.25);
    // Verified only: (2,1), (2,2), (1,0), (1,0); pass@2 and pass^2 over alpha and beta.
    close(&r["pass_at_k_verified"]["1"], 0.375);
    close(&r["pass_at_k_verified"]["2"], 1.0);
    close(&r["pass_hat_k_verified"]["2"], 0.5);
    assert_eq!(
        r["errors"],
        serde_json::json!({"environment_build": 1, "verifier_timeout": 1})
    );
    assert_eq!(
        (&r["input_tokens"], &r["output_tokens"]),
        (&700.into(), &140.into())
    );
    close(&r["cost_usd"], 0.07);
    close(&r["cost_per_solved_usd"], 0.07 / 3.0);
    // Walls 100..800 ms: nearest rank 4 of 8 and 8 of 8.
    assert_eq!(r["wall_ms"], serde_json::json!({"p50": 400, "p95": 800}));
    // Per task, unclustered: alpha [1, 0] has SE = sd/√2 = (1/√2)/√2 = 1/2, t(0.975, 1).
    let alpha = &r["tasks"]["alpha"];
    assert_eq!(alpha["clustered"], false);
    close(&alpha["mean_reward"], 0.5);
    close(&alpha["stderr"], 0.5);
    close(&alpha["ci95"][1], 0.5 + 12.706204736174694 * 0.5);
    close(&alpha["pass_at_k"]["2"], 1.0);
    let gamma = &r["tasks"]["gamma"];
    close(&gamma["mean_reward"], 0.0);
    close(&gamma["mean_reward_verified"], 0.0);
    assert_eq!(gamma["stderr_verified"], Value::Null, "one verified trial");
    assert_eq!(
        gamma["pass_at_k_verified"]["2"],
        Value::Null,
        "fewer than 2 verified"
    );
    assert_eq!(gamma["errors"], serde_json::json!({"verifier_timeout": 1}));
}

#[test]
fn the_report_as_text_shows_both_countings_and_every_task() {
    let run = Test::new()
        .args(["eval", "report", &results("a")])
        .run()
        .code(0);
    snapshot!(run.stdout());
}

/// B against A: alpha 0.5 → 1, beta 1 → 0.5, gamma 0 → 1, delta 0.25 → 0.5; epsilon only
/// in B.
#[test]
fn compare_of_two_fixed_result_sets() {
    let json = Test::new()
        .args([
            "eval",
            "compare",
            &results("a"),
            &results("b"),
            "--format",
            "json",
        ])
        .run()
        .code(0);
    let c: Value = serde_json::from_str(json.stdout()).expect("one JSON object");
    let diffs: Vec<(String, f64, String)> = c["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            (
                t["task"].as_str().expect("name").to_owned(),
                t["difference"].as_f64().expect("a number"),
                t["change"].as_str().expect("change").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        diffs,
        [
            ("alpha".to_owned(), 0.5, "improved".to_owned()),
            ("beta".to_owned(), -0.5, "regressed".to_owned()),
            ("delta".to_owned(), 0.25, "improved".to_owned()),
            ("gamma".to_owned(), 1.0, "improved".to_owned()),
        ]
    );
    assert_eq!(c["only_b"], serde_json::json!(["epsilon"]));
    // Mean of (0.5, −0.5, 0.25, 1) = 1.25/4; sign test 3 vs 1: 2 · (1 + 4)/16.
    close(&c["mean_difference"], 0.3125);
    close(&c["sign_test_p"], 0.625);
    assert_eq!(
        (&c["improved"], &c["regressed"], &c["same"]),
        (&3.into(), &1.into(), &0.into())
    );
    // The bootstrap interval is a set of resampled means of the four differences:
    // within their range, around the mean, and the same on every run (fixed seed).
    let ci = [
        c["ci95"][0].as_f64().expect("lo"),
        c["ci95"][1].as_f64().expect("hi"),
    ];
    assert!(
        -0.5 <= ci[0] && ci[0] < 0.3125 && 0.3125 < ci[1] && ci[1] <= 1.0,
        "{ci:?}"
    );
    let again = Test::new()
        .args([
            "eval",
            "compare",
            &results("a"),
            &results("b"),
            "--format",
            "json",
        ])
        .run()
        .code(0);
    assert_eq!(again.stdout(), json.stdout());
    let text = Test::new()
        .args(["eval", "compare", &results("a"), &results("b")])
        .run()
        .code(0);
    snapshot!(text.stdout());
}

#[test]
fn a_directory_without_eval_json_is_not_an_eval() {
    let run = Test::new().args(["eval", "report", "."]).run().code(2);
    snapshot!(run.stderr());
}
