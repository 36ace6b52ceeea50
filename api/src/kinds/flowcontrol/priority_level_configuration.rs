//! PriorityLevelConfiguration (flowcontrol.apiserver.k8s.io/v1): how much
//! of the server a priority level gets and how its excess waits, as
//! upstream's `ValidatePriorityLevelConfiguration` checks it.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::{bootstrap, conditions, EXEMPT};
use crate::defaults::{child, default_pointer, default_zero, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{self, age, get, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct PriorityLevelConfiguration;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        false,
        Arc::new(PriorityLevelConfiguration),
    )
    .subresources(&["status"])]
}

/// v1beta3's round-trip marker, which no v1 object may carry.
const PRESERVE_ZERO_SHARES: &str = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";
const MAX_QUEUES: i64 = 10_000_000;
/// Shuffle sharding's hash bits (upstream's shufflesharding.MaxHashBits).
const MAX_HASH_BITS: f64 = 60.0;

impl Kind for PriorityLevelConfiguration {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    // Upstream's update validation is its create validation.
    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_status_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        conditions(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Type", "string", D_PL_TYPE),
            col("NominalConcurrencyShares", "string", D_PL_SHARES),
            col("Queues", "string", D_PL_QUEUES),
            col("HandSize", "string", D_PL_HAND_SIZE),
            col("QueueLengthLimit", "string", D_PL_QUEUE_LENGTH),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// A field's integer, or None when it is absent (validation tells the two
/// apart; the printer's `values::int` reads an absent one as 0).
fn int(value: &Value, key: &str) -> Option<i64> {
    value.get(key).and_then(Value::as_i64)
}

fn present<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.get(key).filter(|v| !v.is_null())
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|annotations| annotations.contains_key(PRESERVE_ZERO_SHARES))
    {
        errs.push(FieldError::forbidden(
            "metadata.annotations",
            &format!("annotation '{PRESERVE_ZERO_SHARES}' is forbidden"),
        ));
    }
    let name = crate::object::name(object);
    let empty = Value::Object(Map::new());
    let spec = object.get("spec").unwrap_or(&empty);
    errs.extend(validate_spec(name, spec));
    let mandatory = bootstrap::mandatory_spec(bootstrap::mandatory_priority_levels(), name);
    if let Some(mut fixed) = mandatory {
        // The exempt level's own settings are the administrator's to tune.
        let message = if name == EXEMPT {
            match spec.get("exempt") {
                Some(exempt) => fixed["exempt"] = exempt.clone(),
                None => _ = fixed.as_object_mut().map(|f| f.remove("exempt")),
            }
            "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value"
        } else {
            "spec of 'catch-all' must equal the fixed value"
        };
        if !crate::validate::meta::semantically_equal(spec, &fixed) {
            errs.push(FieldError::invalid_rendered(
                "spec",
                &crate::openapi::go_values::go_format(spec),
                message,
            ));
        }
    }
    errs.extend(conditions(object));
    errs
}

fn validate_spec(name: &str, spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let level_type = spec.get("type").and_then(Value::as_str).unwrap_or("");
    if (name == EXEMPT) != (level_type == "Exempt") {
        errs.push(FieldError::invalid(
            "spec.type",
            level_type,
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    match level_type {
        "Exempt" => {
            if present(spec, "limited").is_some() {
                errs.push(FieldError::forbidden(
                    "spec.limited",
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(exempt) = present(spec, "exempt") {
                errs.extend(shares_and_lending(exempt, "spec.exempt"));
            }
        }
        "Limited" => {
            if present(spec, "exempt").is_some() {
                errs.push(FieldError::forbidden(
                    "spec.exempt",
                    "must be nil if the type is Limited",
                ));
            }
            match present(spec, "limited") {
                Some(limited) => errs.extend(validate_limited(limited)),
                None => errs.push(FieldError::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                )),
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.type",
            other,
            &["Exempt", "Limited"],
        )),
    }
    errs
}

/// The nominal shares both kinds of level have: none below zero.
fn shares(settings: &Value, path: &str) -> Option<FieldError> {
    let shares = int(settings, "nominalConcurrencyShares").filter(|s| *s < 0)?;
    Some(FieldError::invalid_rendered(
        format!("{path}.nominalConcurrencyShares"),
        &shares.to_string(),
        "must be a non-negative integer",
    ))
}

/// The share of seats both kinds of level may lend: a percentage.
fn lendable_percent(settings: &Value, path: &str) -> Option<FieldError> {
    let lendable = int(settings, "lendablePercent").filter(|l| !(0..=100).contains(l))?;
    Some(FieldError::invalid_rendered(
        format!("{path}.lendablePercent"),
        &lendable.to_string(),
        "must be between 0 and 100, inclusive",
    ))
}

fn shares_and_lending(settings: &Value, path: &str) -> Vec<FieldError> {
    shares(settings, path)
        .into_iter()
        .chain(lendable_percent(settings, path))
        .collect()
}

fn validate_limited(limited: &Value) -> Vec<FieldError> {
    let path = "spec.limited";
    let mut errs: Vec<FieldError> = shares(limited, path).into_iter().collect();
    let empty = Value::Object(Map::new());
    errs.extend(validate_limit_response(
        limited.get("limitResponse").unwrap_or(&empty),
    ));
    errs.extend(lendable_percent(limited, path));
    if let Some(limit) = int(limited, "borrowingLimitPercent").filter(|b| *b < 0) {
        errs.push(FieldError::invalid_rendered(
            format!("{path}.borrowingLimitPercent"),
            &limit.to_string(),
            "if specified, must be a non-negative integer",
        ));
    }
    errs
}

fn validate_limit_response(response: &Value) -> Vec<FieldError> {
    let path = "spec.limited.limitResponse";
    let queuing = present(response, "queuing");
    match response.get("type").and_then(Value::as_str).unwrap_or("") {
        // Upstream's wording says "Limited" where it means the type.
        "Reject" => queuing
            .map(|_| {
                FieldError::forbidden(
                    format!("{path}.queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                )
            })
            .into_iter()
            .collect(),
        "Queue" => match queuing {
            Some(queuing) => validate_queuing(queuing, &format!("{path}.queuing")),
            None => vec![FieldError::required(
                format!("{path}.queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )],
        },
        other => vec![FieldError::not_supported(
            format!("{path}.type"),
            other,
            &["Queue", "Reject"],
        )],
    }
}

fn validate_queuing(queuing: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let invalid = |key: &str, value: i64, detail: &str| {
        FieldError::invalid_rendered(format!("{path}.{key}"), &value.to_string(), detail)
    };
    let queue_length_limit = int(queuing, "queueLengthLimit").unwrap_or(0);
    if queue_length_limit <= 0 {
        errs.push(invalid(
            "queueLengthLimit",
            queue_length_limit,
            "must be positive",
        ));
    }
    let queues = int(queuing, "queues").unwrap_or(0);
    if queues <= 0 {
        errs.push(invalid("queues", queues, "must be positive"));
    } else if queues > MAX_QUEUES {
        errs.push(invalid(
            "queues",
            queues,
            &format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hand_size = int(queuing, "handSize").unwrap_or(0);
    if hand_size <= 0 {
        errs.push(invalid("handSize", hand_size, "must be positive"));
    } else if hand_size > queues {
        errs.push(invalid(
            "handSize",
            hand_size,
            &format!("should not be greater than queues ({queues})"),
        ));
    } else if ((queues as f64).log2() * hand_size as f64).ceil() > MAX_HASH_BITS {
        errs.push(invalid(
            "handSize",
            hand_size,
            &format!(
                "required entropy bits of deckSize {queues} and handSize {hand_size} should not be greater than {MAX_HASH_BITS}"
            ),
        ));
    }
    errs
}

/// flowcontrol/v1 priority levels: shares, lendable percent and queuing shape.
fn set_defaults(configuration: &mut Object) {
    let Some(spec) = child(configuration, "spec") else {
        return;
    };
    if let Some(limited) = child(spec, "limited") {
        // A pointer in v1: an explicit 0 is kept (it means "no seats").
        default_pointer(limited, "nominalConcurrencyShares", json!(30));
        default_pointer(limited, "lendablePercent", json!(0));
        if let Some(queuing) = child(limited, "limitResponse").and_then(|r| child(r, "queuing")) {
            default_zero(queuing, "handSize", json!(8));
            default_zero(queuing, "queues", json!(64));
            default_zero(queuing, "queueLengthLimit", json!(50));
        }
    }
    if let Some(exempt) = child(spec, "exempt") {
        default_pointer(exempt, "nominalConcurrencyShares", json!(0));
        default_pointer(exempt, "lendablePercent", json!(0));
    }
}

const D_PL_TYPE: &str = "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.";
const D_PL_SHARES: &str = "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)";
const D_PL_QUEUES: &str = "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.";
const D_PL_HAND_SIZE: &str = "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.";
const D_PL_QUEUE_LENGTH: &str = "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.";

fn cells(pl: &Value) -> Vec<Cell> {
    let limited = get(pl, "/spec/limited").filter(|l| !l.is_null());
    let shares: Value = match limited {
        Some(limited) => values::int(limited, "/nominalConcurrencyShares").into(),
        None => "<none>".into(),
    };
    let queuing = limited
        .and_then(|l| get(l, "/limitResponse/queuing"))
        .filter(|q| !q.is_null());
    let setting = |key: &str| -> Value {
        match queuing {
            Some(queuing) => values::int(queuing, key).into(),
            None => "<none>".into(),
        }
    };
    vec![
        name(pl).into(),
        text(pl, "/spec/type").into(),
        shares.into(),
        setting("/queues").into(),
        setting("/handSize").into(),
        setting("/queueLengthLimit").into(),
        age(pl),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(object: &Value) -> Vec<String> {
        PriorityLevelConfiguration
            .validate_create(object)
            .iter()
            .map(FieldError::render)
            .collect()
    }

    fn level(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    /// Upstream's printer: shares of a Limited level, the queuing settings
    /// only when it queues, `<none>` otherwise.
    #[test]
    fn rows_print_shares_and_queuing_as_upstream() {
        let now = chrono::Utc::now();
        let cells = |object: &Value| {
            crate::printers::cells_at(&PriorityLevelConfiguration.table_cells(object), now)[..6]
                .to_vec()
        };
        let rejecting = level(
            "catch-all",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                   "limitResponse": {"type": "Reject"}}}),
        );
        assert_eq!(
            cells(&rejecting),
            [
                json!("catch-all"),
                json!("Limited"),
                json!(5),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
        let queuing = level(
            "workload-low",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 100,
                   "limitResponse": {"type": "Queue", "queuing":
                       {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}),
        );
        assert_eq!(
            cells(&queuing),
            [
                json!("workload-low"),
                json!("Limited"),
                json!(100),
                json!(128),
                json!(6),
                json!(50)
            ]
        );
        let exempt = level("exempt", json!({"type": "Exempt", "exempt": {}}));
        assert_eq!(
            cells(&exempt),
            [
                json!("exempt"),
                json!("Exempt"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn the_bootstrap_levels_are_valid() {
        for object in bootstrap::mandatory_priority_levels()
            .into_iter()
            .chain(bootstrap::suggested_priority_levels())
        {
            assert_eq!(messages(&object), Vec::<String>::new(), "{object}");
        }
    }

    #[test]
    fn limited_levels_in_upstreams_words() {
        let queuing = |queues: i64, hand_size: i64| {
            level(
                "l",
                json!({"type": "Limited", "limited": {
                    "nominalConcurrencyShares": -1,
                    "lendablePercent": 101,
                    "borrowingLimitPercent": -5,
                    "limitResponse": {"type": "Queue", "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": 0}},
                }}),
            )
        };
        assert_eq!(
            messages(&queuing(8, 9)),
            vec![
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 9: should not be greater than queues (8)",
                "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                "spec.limited.borrowingLimitPercent: Invalid value: -5: if specified, must be a non-negative integer",
            ]
        );
        assert!(messages(&queuing(1_000_000, 10)).contains(
            &"spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 1000000 and handSize 10 should not be greater than 60".to_string()
        ));
    }

    #[test]
    fn types_and_their_settings_agree() {
        assert_eq!(
            messages(&level(
                "l",
                json!({"type": "Exempt", "limited": {"limitResponse": {"type": "Reject"}}})
            )),
            vec![
                r#"spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'"#,
                "spec.limited: Forbidden: must be nil if the type is not Limited",
            ]
        );
        assert_eq!(
            messages(&level("l", json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue"}}}))),
            vec!["spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited"]
        );
        assert_eq!(
            messages(&level("l", json!({"type": "Sometimes"}))),
            vec![
                r#"spec.type: Unsupported value: "Sometimes": supported values: "Exempt", "Limited""#
            ]
        );
    }

    #[test]
    fn the_exempt_level_may_tune_only_its_own_settings() {
        let mut exempt = bootstrap::mandatory_priority_levels().remove(1);
        exempt["spec"]["exempt"] = json!({"nominalConcurrencyShares": 10, "lendablePercent": 50});
        assert_eq!(messages(&exempt), Vec::<String>::new());
        let mut catch_all = bootstrap::mandatory_priority_levels().remove(0);
        catch_all["spec"]["limited"]["nominalConcurrencyShares"] = json!(50);
        let errs = messages(&catch_all);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].ends_with(": spec of 'catch-all' must equal the fixed value"));
    }
}
