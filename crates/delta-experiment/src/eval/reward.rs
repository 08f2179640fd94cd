//! The verifier's reward files, read as Harbor reads them: `reward.json` (named numbers)
//! wins over `reward.txt` (one number); an empty, unparsable or non-finite file is an
//! invalid reward and a missing one no reward at all, both of which make the trial
//! errored. The main reward is reward.txt's number, or reward.json's `reward` key, or its
//! only number.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::dir::ErrorClass;

/// The rewards of a verified trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewards {
    /// The main reward: it decides passed (≥ 1) or failed.
    pub main: f64,
    /// Every named number (reward.txt's is `reward`).
    pub all: BTreeMap<String, f64>,
}

/// Reads the rewards test.sh left in `dir` (the copy of `/logs/verifier`).
///
/// # Errors
/// [`ErrorClass::RewardMissing`] or [`ErrorClass::RewardInvalid`] with what is wrong.
pub fn read_rewards(dir: &Path) -> Result<Rewards, (ErrorClass, String)> {
    let json = dir.join("reward.json");
    let txt = dir.join("reward.txt");
    let invalid = |what: String| (ErrorClass::RewardInvalid, what);
    if json.is_file() {
        let text = std::fs::read_to_string(&json)
            .map_err(|e| invalid(format!("reward.json cannot be read: {e}")))?;
        return parse_json(&text).map_err(|what| invalid(format!("reward.json {what}")));
    }
    if txt.is_file() {
        let text = std::fs::read_to_string(&txt)
            .map_err(|e| invalid(format!("reward.txt cannot be read: {e}")))?;
        let main = parse_number(&text).map_err(|what| invalid(format!("reward.txt {what}")))?;
        return Ok(Rewards {
            main,
            all: BTreeMap::from([("reward".to_owned(), main)]),
        });
    }
    Err((
        ErrorClass::RewardMissing,
        "test.sh wrote neither /logs/verifier/reward.txt nor /logs/verifier/reward.json".to_owned(),
    ))
}

/// reward.txt: one finite number, surrounding whitespace allowed.
fn parse_number(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(
            "is empty; write one number, e.g. `echo 1 > /logs/verifier/reward.txt`".to_owned(),
        );
    }
    match trimmed.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        Ok(value) => Err(format!("holds {value}, which is not a finite number")),
        Err(_) => Err(format!(
            "holds {:?}, which is not a number",
            trimmed.chars().take(80).collect::<String>()
        )),
    }
}

/// reward.json: an object of numbers (booleans count as 1 and 0, as in Harbor).
fn parse_json(text: &str) -> Result<Rewards, String> {
    if text.trim().is_empty() {
        return Err("is empty; write an object of numbers, e.g. {\"reward\": 0.5}".to_owned());
    }
    let value: Value = serde_json::from_str(text).map_err(|e| format!("is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("is not an object; write named numbers, e.g. {\"reward\": 0.5}".to_owned());
    };
    let mut all = BTreeMap::new();
    for (name, value) in map {
        let number = match value {
            Value::Number(number) => number.as_f64().filter(|n| n.is_finite()),
            Value::Bool(flag) => Some(if flag { 1.0 } else { 0.0 }),
            Value::Null | Value::String(_) | Value::Array(_) | Value::Object(_) => None,
        };
        let Some(number) = number else {
            return Err(format!("has {name:?}, which is not a finite number"));
        };
        all.insert(name, number);
    }
    let main = match (all.get("reward"), all.len()) {
        (Some(reward), _) => *reward,
        (None, 1) => all.values().copied().next().unwrap_or_default(),
        (None, 0) => return Err("holds no number".to_owned()),
        (None, n) => {
            return Err(format!(
                "holds {n} numbers and none is named \"reward\"; name the main one \"reward\""
            ));
        }
    };
    Ok(Rewards { main, all })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(files: &[(&str, &str)]) -> Result<Rewards, (ErrorClass, String)> {
        let dir = tempfile::tempdir().expect("a temp dir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        read_rewards(dir.path())
    }

    fn main(files: &[(&str, &str)]) -> f64 {
        read(files).expect("a valid reward").main
    }

    fn class(files: &[(&str, &str)]) -> ErrorClass {
        read(files).expect_err("an invalid reward").0
    }

    #[test]
    fn reward_txt_is_one_number() {
        assert_eq!(main(&[("reward.txt", "1\n")]), 1.0);
        assert_eq!(main(&[("reward.txt", "  0.25 ")]), 0.25);
        assert_eq!(main(&[("reward.txt", "1e-3")]), 0.001);
        let rewards = read(&[("reward.txt", "0")]).expect("valid");
        assert_eq!(rewards.all, BTreeMap::from([("reward".to_owned(), 0.0)]));
        for bad in ["", " \n", "nan", "inf", "-inf", "yes", "1 2"] {
            assert_eq!(
                class(&[("reward.txt", bad)]),
                ErrorClass::RewardInvalid,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn reward_json_wins_and_names_its_numbers() {
        let rewards = read(&[
            ("reward.txt", "0"),
            (
                "reward.json",
                r#"{"reward": 0.5, "tests": 3, "style": true}"#,
            ),
        ])
        .expect("valid");
        assert_eq!(rewards.main, 0.5);
        assert_eq!(rewards.all["tests"], 3.0);
        assert_eq!(rewards.all["style"], 1.0);
        assert_eq!(main(&[("reward.json", r#"{"accuracy": 0.75}"#)]), 0.75);
        for bad in [
            "",
            "{",
            "0.5",
            "[1]",
            "{}",
            r#"{"a": 1, "b": 0}"#,
            r#"{"reward": "1"}"#,
            r#"{"reward": null}"#,
        ] {
            assert_eq!(
                class(&[("reward.json", bad)]),
                ErrorClass::RewardInvalid,
                "{bad:?}"
            );
        }
        // A broken reward.json is not rescued by a valid reward.txt: it wins, as in Harbor.
        assert_eq!(
            class(&[("reward.json", "{"), ("reward.txt", "1")]),
            ErrorClass::RewardInvalid
        );
    }

    #[test]
    fn no_reward_file_is_missing() {
        assert_eq!(
            class(&[("test-stdout.txt", "ok")]),
            ErrorClass::RewardMissing
        );
    }
}
