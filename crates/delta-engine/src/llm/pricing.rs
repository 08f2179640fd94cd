//! Estimated cost of a call: built-in list prices of well-known OpenAI and Anthropic models
//! (or the agent's `llm.pricing`), with cached input tokens and cache writes at their own
//! prices.

use delta_scenario::ModelApi;

use super::response::TokenUsage;

/// Token prices per million tokens, as agent.yaml's `llm.pricing` gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    /// Price of one million prompt tokens (uncached).
    pub input_per_million: f64,
    /// Price of one million completion tokens.
    pub output_per_million: f64,
    /// Price of one million prompt tokens read from the provider's cache; default: see
    /// [`prices`].
    pub cached_input_per_million: Option<f64>,
    /// Price of one million prompt tokens written to the provider's cache; default: see
    /// [`prices`].
    pub cache_write_per_million: Option<f64>,
}

/// The four prices of a model, per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    /// Whether the cached-input price is known rather than taken to be the full input
    /// price (then a cost with cached tokens is an upper bound).
    pub cached_known: bool,
}

impl Prices {
    /// The cost in USD of a call with `usage`: uncached prompt tokens at the input price,
    /// cached and cache-written ones at theirs, completion tokens at the output price.
    #[must_use]
    pub fn cost_usd(&self, usage: &TokenUsage) -> f64 {
        let uncached = usage
            .prompt_tokens
            .saturating_sub(usage.cached_tokens)
            .saturating_sub(usage.cache_write_tokens);
        (uncached as f64 * self.input
            + usage.cached_tokens as f64 * self.cached_input
            + usage.cache_write_tokens as f64 * self.cache_write
            + usage.completion_tokens as f64 * self.output)
            / TOKENS_PER_PRICE_UNIT
    }
}

/// USD per million (input, output, cached input) tokens: OpenAI's published standard-tier
/// list prices as of August 2025 (after the June 2025 o3 price cut and the GPT-5 launch);
/// cache writes cost nothing extra for these models (digest B5). Exact names come before
/// the base names they would otherwise fall back to.
const OPENAI_PRICES: &[(&str, f64, f64, f64)] = &[
    // The first gpt-4o snapshot kept its launch price, without a cache discount.
    ("gpt-4o-2024-05-13", 5.00, 15.00, 5.00),
    ("gpt-4o", 2.50, 10.00, 1.25),
    ("gpt-4o-mini", 0.15, 0.60, 0.075),
    ("gpt-4.1", 2.00, 8.00, 0.50),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025),
    ("gpt-5", 1.25, 10.00, 0.125),
    ("gpt-5-mini", 0.25, 2.00, 0.025),
    ("gpt-5-nano", 0.05, 0.40, 0.005),
    ("o3", 2.00, 8.00, 0.50),
    ("o4-mini", 1.10, 4.40, 0.275),
];

/// USD per million (input, output) tokens: Anthropic's list prices as of November 2025.
/// Cache reads cost 0.1× and five-minute cache writes 1.25× the input price (digest A6).
const ANTHROPIC_PRICES: &[(&str, f64, f64)] = &[
    ("claude-opus-4-5", 5.00, 25.00),
    ("claude-opus-4-1", 15.00, 75.00),
    ("claude-opus-4", 15.00, 75.00),
    ("claude-sonnet-4-5", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-haiku-4-5", 1.00, 5.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-haiku", 0.25, 1.25),
];

/// Anthropic's cache-read price as a share of the input price (A6).
const ANTHROPIC_CACHE_READ: f64 = 0.1;
/// Anthropic's five-minute cache-write price as a multiple of the input price (A6).
const ANTHROPIC_CACHE_WRITE: f64 = 1.25;

const TOKENS_PER_PRICE_UNIT: f64 = 1_000_000.0;

/// The prices of `model` asked through `api`: `given` (agent.yaml's `llm.pricing`) when
/// set, else the built-in list. Cached-input and cache-write prices the agent leaves out
/// are, for Anthropic, 0.1× and 1.25× its input price (the API's own multipliers); for
/// OpenAI's APIs the list's cached price for a known model, else the input price (the
/// cost is then an upper bound, and [`Prices::cached_known`] is false), and writes at the
/// input price. `None` when the model is unknown and no price is given.
#[must_use]
pub fn prices(api: ModelApi, model: &str, given: Option<Pricing>) -> Option<Prices> {
    let listed = list_prices(api, model);
    let (input, output) = match given {
        Some(given) => (given.input_per_million, given.output_per_million),
        None => {
            let listed = listed?;
            (listed.input, listed.output)
        }
    };
    let (cached_default, write_default, known) = match api {
        ModelApi::Anthropic => (
            input * ANTHROPIC_CACHE_READ,
            input * ANTHROPIC_CACHE_WRITE,
            true,
        ),
        ModelApi::Chat | ModelApi::Responses => match listed.filter(|_| given.is_none()) {
            Some(listed) => (listed.cached_input, input, true),
            None => (input, input, false),
        },
    };
    let cached = given.and_then(|given| given.cached_input_per_million);
    Some(Prices {
        input,
        output,
        cached_input: cached.unwrap_or(cached_default),
        cache_write: given
            .and_then(|given| given.cache_write_per_million)
            .unwrap_or(write_default),
        cached_known: known || cached.is_some(),
    })
}

/// The estimated cost in USD of `input_tokens` prompt and `output_tokens` completion
/// tokens, none of them cached.
///
/// `price_override` is (input, output) USD per million tokens and wins over the table
/// (for other providers, fine-tunes or new prices). Without it, `model` is looked up
/// exactly, then with a dated snapshot suffix removed (`gpt-4o-2024-08-06` → `gpt-4o`,
/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). `None` means the model is unknown.
pub fn cost_usd(
    model: &str,
    input_tokens: u64,
    output_tokens: u64,
    price_override: Option<(f64, f64)>,
) -> Option<f64> {
    let (input_price, output_price) = price_override.or_else(|| {
        ModelApi::ALL
            .into_iter()
            .find_map(|api| list_prices(api, model))
            .map(|prices| (prices.input, prices.output))
    })?;
    let cost = (input_tokens as f64 * input_price + output_tokens as f64 * output_price)
        / TOKENS_PER_PRICE_UNIT;
    Some(cost)
}

/// The built-in prices of `model`: OpenAI's for chat and Responses, Anthropic's for
/// Anthropic (an OpenAI-compatible gateway in front of Claude takes Anthropic's too).
fn list_prices(api: ModelApi, model: &str) -> Option<Prices> {
    let model = model.trim().to_ascii_lowercase();
    let openai = |name: &str| {
        OPENAI_PRICES.iter().find(|(known, ..)| *known == name).map(
            |&(_, input, output, cached_input)| Prices {
                input,
                output,
                cached_input,
                cache_write: input,
                cached_known: true,
            },
        )
    };
    let anthropic = |name: &str| {
        ANTHROPIC_PRICES
            .iter()
            .find(|(known, ..)| *known == name)
            .map(|&(_, input, output)| Prices {
                input,
                output,
                cached_input: input * ANTHROPIC_CACHE_READ,
                cache_write: input * ANTHROPIC_CACHE_WRITE,
                cached_known: true,
            })
    };
    let lookup = |name: &str| match api {
        ModelApi::Chat | ModelApi::Responses => openai(name).or_else(|| anthropic(name)),
        ModelApi::Anthropic => anthropic(name),
    };
    lookup(&model)
        .or_else(|| strip_snapshot_date(&model).and_then(lookup))
        .or_else(|| strip_anthropic_date(&model).and_then(lookup))
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

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`: Anthropic names snapshots
/// `{base}-YYYYMMDD`.
fn strip_anthropic_date(model: &str) -> Option<&str> {
    let split = model.len().checked_sub("-YYYYMMDD".len())?;
    let (base, date) = (model.get(..split)?, model.get(split..)?);
    let is_date = date.starts_with('-')
        && date.len() == 9
        && date.bytes().skip(1).all(|b| b.is_ascii_digit());
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
        assert_eq!(
            strip_anthropic_date("claude-sonnet-4-5-20250929"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(strip_anthropic_date("claude-sonnet-4-5"), None);
    }

    fn usage(prompt: u64, cached: u64, written: u64, completion: u64) -> TokenUsage {
        TokenUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            cached_tokens: cached,
            cache_write_tokens: written,
            reasoning_tokens: None,
        }
    }

    #[test]
    fn cached_and_written_tokens_cost_their_own_prices() {
        let sonnet = prices(ModelApi::Anthropic, "claude-sonnet-4-5-20250929", None).unwrap();
        assert!((sonnet.cached_input - 0.3).abs() < 1e-12 && sonnet.cache_write == 3.75);
        // 1M uncached at $3, 2M read at $0.30, 1M written at $3.75, 1M out at $15.
        let cost = sonnet.cost_usd(&usage(4_000_000, 2_000_000, 1_000_000, 1_000_000));
        assert!((cost - (3.0 + 0.6 + 3.75 + 15.0)).abs() < 1e-9, "{cost}");
        let gpt5 = prices(ModelApi::Responses, "gpt-5", None).unwrap();
        let cost = gpt5.cost_usd(&usage(1_000_000, 1_000_000, 0, 0));
        assert!((cost - 0.125).abs() < 1e-12, "{cost}");
        let given = Pricing {
            input_per_million: 1.0,
            output_per_million: 2.0,
            cached_input_per_million: None,
            cache_write_per_million: None,
        };
        let local = prices(ModelApi::Chat, "llama", Some(given)).unwrap();
        assert_eq!((local.cached_input, local.cached_known), (1.0, false));
        let claude = prices(ModelApi::Anthropic, "my-claude", Some(given)).unwrap();
        assert!((claude.cached_input - 0.1).abs() < 1e-12 && claude.cache_write == 1.25);
        let explicit = Pricing {
            cached_input_per_million: Some(0.5),
            cache_write_per_million: Some(3.0),
            ..given
        };
        let local = prices(ModelApi::Chat, "llama", Some(explicit)).unwrap();
        assert_eq!(
            (local.cached_input, local.cache_write, local.cached_known),
            (0.5, 3.0, true)
        );
        assert_eq!(prices(ModelApi::Chat, "llama", None), None);
    }
}
