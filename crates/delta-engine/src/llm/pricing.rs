//! Estimated cost of a call from built-in list prices of well-known OpenAI models.

/// USD per million (input, output) tokens: OpenAI's published standard-tier list prices
/// as of August 2025 (after the June 2025 o3 price cut and the GPT-5 launch). Cached
/// input discounts are not modelled, so a cost is an upper bound. Exact names come before
/// the base names they would otherwise fall back to.
const LIST_PRICES: &[(&str, f64, f64)] = &[
    // The first gpt-4o snapshot kept its launch price.
    ("gpt-4o-2024-05-13", 5.00, 15.00),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-5", 1.25, 10.00),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("o3", 2.00, 8.00),
    ("o4-mini", 1.10, 4.40),
];

const TOKENS_PER_PRICE_UNIT: f64 = 1_000_000.0;

/// The estimated cost in USD of `input_tokens` prompt and `output_tokens` completion
/// tokens.
///
/// `price_override` is (input, output) USD per million tokens and wins over the table
/// (for other providers, fine-tunes or new prices). Without it, `model` is looked up
/// exactly, then with a dated snapshot suffix removed (`gpt-4o-2024-08-06` → `gpt-4o`).
/// `None` means the model is unknown.
pub fn cost_usd(
    model: &str,
    input_tokens: u64,
    output_tokens: u64,
    price_override: Option<(f64, f64)>,
) -> Option<f64> {
    let (input_price, output_price) = price_override.or_else(|| list_price(model))?;
    let cost = (input_tokens as f64 * input_price + output_tokens as f64 * output_price)
        / TOKENS_PER_PRICE_UNIT;
    Some(cost)
}

fn list_price(model: &str) -> Option<(f64, f64)> {
    let model = model.trim().to_ascii_lowercase();
    let lookup = |name: &str| {
        LIST_PRICES
            .iter()
            .find(|(known, _, _)| *known == name)
            .map(|&(_, input, output)| (input, output))
    };
    lookup(&model).or_else(|| strip_snapshot_date(&model).and_then(lookup))
}

/// `gpt-4o-2024-08-06` → `gpt-4o`: OpenAI names snapshots `{base}-YYYY-MM-DD`.
fn strip_snapshot_date(model: &str) -> Option<&str> {
    let split = model.len().checked_sub("-YYYY-MM-DD".len())?;
    let (base, date) = (model.get(..split)?, model.get(split..)?);
    let is_date = date.len() == 11
        && date.bytes().enumerate().all(|(index, byte)| match index {
            0 | 5 | 8 => byte == b'-',
            _ => byte.is_ascii_digit(),
        });
    is_date.then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_dates_are_recognised_only_at_the_end() {
        assert_eq!(strip_snapshot_date("gpt-4o-2024-08-06"), Some("gpt-4o"));
        assert_eq!(strip_snapshot_date("o3-2025-04-16"), Some("o3"));
        assert_eq!(strip_snapshot_date("gpt-4o"), None);
        assert_eq!(strip_snapshot_date("gpt-4o-2024-08"), None);
        assert_eq!(strip_snapshot_date("gpt-4o-20240806xx"), None);
        assert_eq!(strip_snapshot_date("é-2024-08-06"), Some("é"));
    }
}
